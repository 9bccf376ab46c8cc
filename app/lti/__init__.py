"""LTI 1.3 / LTI Advantage: the autograder as a tool in any LMS (Canvas, Moodle, ...).

One concept per module: `registrations` (platforms, and pylti1p3's tool configuration),
`contexts` (the LMS courses bound to ours: which course a launch belongs to),
`keys` (the tool's RSA key), `adapters` (pylti1p3 on Starlette; the nonce-replay check),
`launch` (OIDC login and launch), `deep_linking`, `passback` (scores to the line item,
durably), `sessions` (signed tokens for the browser), `pages` (HTML), `router` (the routes).
See docs/lms.md.

May import: core, api, access, courses, exercises, outbox, submissions."""
