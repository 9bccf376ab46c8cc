"""Trusted reference implementations, one module per exercise, with known-wrong variants."""
