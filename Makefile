# The few commands a newcomer needs. Everything installs into .venv; nothing global.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install serve test lint typecheck pytest deploy-check compose-check bench bench-phases bench-children bench-http bench-load bench-deadline bench-api bench-cli grade-example clean

install: $(VENV)/.installed app/ui/static/dist/page.js

$(VENV)/.installed: pyproject.toml client/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet -e ./client
	touch $@

## The exercise page's scripts and styles (web/): packages from the lock file, bundled by esbuild.
app/ui/static/dist/page.js: web/package-lock.json web/build.mjs $(wildcard web/src/*) $(wildcard web/src/*/*)
	cd web && npm ci --no-audit --no-fund && npm run build

## The service on its embedded defaults: SQLite in ./var, grading in its own sandbox pool.
serve: install
	$(BIN)/autograder serve

## The whole suite: lint, types, tests (what CI runs).
test: lint typecheck pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

pytest: install
	$(BIN)/pytest

## The deployment files without a Docker engine (also part of `pytest`): hadolint, ShellCheck and
## the compose schema, then the image's install and start commands in a fresh venv, API and
## worker on the local Redis and PostgreSQL as docker-compose.yml wires them.
deploy-check: install
	$(BIN)/pytest tests/deploy

## The compose deployment on a real Docker engine (tests/compose/check.sh): base images built
## offline (docker/offline/), the image, `docker compose up`, grading, /readyz, the hostile
## corpus, a worker killed mid-grade, down/up/down -v. Sets the engine up when it is missing.
compose-check: install
	tests/compose/check.sh

## Latency of exercise 1 through the sandbox, against in-process and fresh-interpreter graders.
bench: install
	$(BIN)/python bench/grading_latency.py

## One grading's CPU phase by phase, in-process and sandboxed (fork, hardening, work, exit).
bench-phases: install
	$(BIN)/python bench/phases.py

## A grading's CPU and page faults in two sandboxed children against one (the prototype).
bench-children: install
	$(BIN)/python bench/children.py

## Sync grading over HTTP (`autograder serve`) against a fresh `import torch` and in-process work.
bench-http: install
	$(BIN)/python bench/http_latency.py

## 500 submissions at concurrency 32: embedded, then 2 workers on the local Redis and PostgreSQL.
bench-load: install
	$(BIN)/python bench/load.py --mode both --forward-only

## A deadline: 1,000 students signed in by links of their own, each submitting once (Poisson
## arrivals), against the service on its defaults: embedded at 16.7/s and 40/s, quiet and with a
## CPU hog on one core, then API + 2 workers on the local Redis and PostgreSQL at 40/s; then the
## service level held (docs/performance.md). About 9 minutes on a quiet 2-core machine.
bench-deadline: install
	$(BIN)/python bench/deadline_burst.py --suite

## The API process's CPU per request by kind (POST, GET queued, graded, held), against a bare
## GET /healthz on the same server: where the API's share of a grading goes (scale-out shape).
bench-api: install
	$(BIN)/python bench/api_cost.py

## Whole-process time of `autograder --help`, `exercises`, `doctor` and `grade`, each paired with a
## bare `import torch` (in a temporary data dir: nothing of yours is read or written).
bench-cli: install
	$(BIN)/python bench/cli.py

## Grade the example solution of the seed exercise.
grade-example: install
	$(BIN)/autograder grade multi-headed-self-attention exercises/multi-headed-self-attention/solutions/neetcode_common_answer.py

clean:
	rm -rf $(VENV) var .mypy_cache .ruff_cache .pytest_cache web/node_modules app/ui/static/dist
