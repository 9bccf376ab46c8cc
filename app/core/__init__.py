"""What every room of the service stands on: settings, the database and its sessions, the shared
storage models (app.core.models: courses, API keys, submissions), logs, metrics, the background
loops (periodic), rate limiting, callback URLs, the commands' shared output, student ids and
visible text, and the UTC day of the figures.

May import: grader only; no other package of app (tests/test_layers.py holds it so)."""
