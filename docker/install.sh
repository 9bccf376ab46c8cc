#!/bin/sh
# The image's install command: the Dockerfile's builder stage RUNs it, and CI runs this same file
# in a fresh virtual environment (tests/deploy/test_image_commands.py).
#
#     docker/install.sh [--dependencies] VENV
#
# Makes a virtual environment at VENV and installs the project of this source tree (the folder
# above this script) into it, not editable: the image keeps the venv and drops the sources.
# With --dependencies, only what pyproject.toml requires, not the project: the Dockerfile runs
# that first, from pyproject.toml alone, so that a change in the sources reuses that layer.
#
# TORCH_INDEX_URL: the package index torch alone comes from. The image names PyTorch's own CPU
# wheel index there, so that no CUDA build (several GB) is pulled. Unset, pip's configuration
# finds torch, as on the project's machines, where the CPU wheel is kept locally.
# PYTHON: the interpreter the venv is made from (default python3, the image's).
# EXTRA_CA_CERTS: certificates (PEM text) that pip trusts besides the system's bundle, for a
# network that intercepts TLS.
set -eu

dependencies_only=false
if [ "${1:-}" = --dependencies ]; then
    dependencies_only=true
    shift
fi
venv=${1:?usage: docker/install.sh [--dependencies] VENV}
python=${PYTHON:-python3}
src=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -n "${EXTRA_CA_CERTS:-}" ]; then
    cat /etc/ssl/certs/ca-certificates.crt > "$work/ca.pem" 2>/dev/null || true
    printf '%s\n' "$EXTRA_CA_CERTS" >> "$work/ca.pem"
    export PIP_CERT="$work/ca.pem"
fi

# The torch requirement exactly as pyproject.toml pins it, so the pin lives in one place; all
# the requirements into a requirements file, for --dependencies (torch among them: satisfied by
# then, it brings its own dependencies).
torch=$("$python" - "$src/pyproject.toml" "$work/requirements.txt" <<'EOF'
import sys, tomllib

with open(sys.argv[1], "rb") as file:
    dependencies = tomllib.load(file)["project"]["dependencies"]
with open(sys.argv[2], "w") as file:
    file.writelines(d + "\n" for d in dependencies)
print(next(d for d in dependencies if d.split("=")[0].strip() == "torch"))
EOF
)

"$python" -m venv "$venv"
# torch first, alone and without its dependencies: the index named for it serves torch and
# nothing else. The project's install below finds torch satisfied and brings torch's own
# dependencies from the default index, with every other package.
"$venv/bin/pip" install --no-cache-dir --no-deps \
    ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} "$torch"
if [ "$dependencies_only" = true ]; then
    "$venv/bin/pip" install --no-cache-dir --requirement "$work/requirements.txt"
else
    "$venv/bin/pip" install --no-cache-dir "$src"
fi
