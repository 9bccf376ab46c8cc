"""Who calls and what they may do: authentication (auth: API keys, student links, staff sessions
of an LMS launch), the authorization rules (rules), signed tokens, and the `keys` and `students`
commands.

May import: core, api, courses."""
