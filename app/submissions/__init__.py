"""The submissions' routes and their service (store, list, find).

May import: core, api, access, courses."""
