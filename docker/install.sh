#!/bin/sh
# The image's install command: the Dockerfile's builder stage RUNs it, and CI runs this same file
# in a fresh virtual environment (tests/deploy/test_image_commands.py).
#
#     docker/install.sh VENV
#
# Makes a virtual environment at VENV and installs the project of this source tree (the folder
# above this script) into it, not editable: the image keeps the venv and drops the sources.
#
# TORCH_INDEX_URL: the package index torch alone comes from. The image names PyTorch's own CPU
# wheel index there, so that no CUDA build (several GB) is pulled. Unset, pip's configuration
# finds torch, as on the project's machines, where the CPU wheel is kept locally.
# PYTHON: the interpreter the venv is made from (default python3, the image's).
set -eu

venv=${1:?usage: docker/install.sh VENV}
python=${PYTHON:-python3}
src=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)

# The torch requirement exactly as pyproject.toml pins it, so the pin lives in one place.
torch=$("$python" - "$src/pyproject.toml" <<'EOF'
import sys, tomllib

with open(sys.argv[1], "rb") as file:
    dependencies = tomllib.load(file)["project"]["dependencies"]
print(next(d for d in dependencies if d.split("=")[0].strip() == "torch"))
EOF
)

"$python" -m venv "$venv"
# torch first, alone and without its dependencies: the index named for it serves torch and
# nothing else. The project's install below finds torch satisfied and brings torch's own
# dependencies from the default index, with every other package.
"$venv/bin/pip" install --no-cache-dir --no-deps \
    ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} "$torch"
"$venv/bin/pip" install --no-cache-dir "$src"
