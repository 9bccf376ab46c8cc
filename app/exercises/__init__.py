"""The exercises' routes and the caller's progress on them (progress).

May import: core, api, access, courses."""
