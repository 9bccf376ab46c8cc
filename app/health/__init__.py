"""Liveness, readiness and metrics routes.

May import: core, api, grading."""
