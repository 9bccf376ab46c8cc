# One image for the API and the grading workers; docker-compose.yml gives each its command.
# The web stage bundles the exercise page's scripts and styles (web/) with Node; the builder
# installs the project, that bundle included, into a venv; the runtime stage keeps that venv and
# the few files read at run time (the exercise catalog, the start and health-check scripts), no
# sources, no Node, no compilers, no pip cache.

# Both stages on one base: the venv's python is a link to the base image's interpreter.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
# Node only bundles (esbuild); nothing of it reaches the runtime stage. Pinned by major version,
# an LTS line still maintained, as `make install` needs any recent Node.
ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS web
# The layout of the repository: web/build.mjs writes to ../app/ui/static/dist.
WORKDIR /src/web
# The manifests first, so that a change in web/src reuses the layer of installed packages.
# `npm ci` installs exactly what the committed lock file pins, from npm's configured registry
# (web/.npmrc keeps its address out of the lock file).
COPY web/package.json web/package-lock.json web/.npmrc ./
# EXTRA_CA_CERTS: certificates (PEM) to trust besides the image's, for a network that
# intercepts TLS (a corporate proxy); docs/service.md shows how to pass them. Only the stages
# that download see them, and nothing of these stages but their products goes further.
ARG EXTRA_CA_CERTS=""
RUN if [ -n "$EXTRA_CA_CERTS" ]; then \
        printf '%s\n' "$EXTRA_CA_CERTS" > /tmp/extra-ca-certificates.pem \
        && export NODE_EXTRA_CA_CERTS=/tmp/extra-ca-certificates.pem; \
    fi \
    && npm ci --no-audit --no-fund
COPY web/ ./
RUN npm run build

FROM ${PYTHON_IMAGE} AS builder
# torch's CPU build, from PyTorch's own wheel index: the default index serves the CUDA build,
# several GB that a CPU-only grader never uses. docker/install.sh takes it for torch alone.
# A mirror of it serves as well: docs/service.md (building offline and behind a proxy).
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG EXTRA_CA_CERTS=""
WORKDIR /src
# The dependencies first, in a layer of their own that only a change of pyproject.toml (or of
# the install script) rebuilds: a change in the sources reuses it and installs the project alone.
COPY pyproject.toml ./
COPY docker/install.sh docker/
RUN docker/install.sh --dependencies /opt/venv
# The context is what .dockerignore lets through: the package sources, the catalog, docker/,
# web/ (for the web stage; unused here). The page's bundle comes from the web stage, never from
# a local build (.dockerignore keeps that out), so that the package data installed is built from
# the sources of this context.
COPY . .
COPY --from=web /src/app/ui/static/dist/ app/ui/static/dist/
RUN docker/install.sh /opt/venv

FROM ${PYTHON_IMAGE}
# A fixed, unprivileged uid: the service and every sandboxed child run as it, and the data
# volume is owned by it (a new named volume takes this directory's owner).
RUN groupadd --system --gid 10001 autograder \
    && useradd --system --uid 10001 --gid autograder --home-dir /nonexistent --no-create-home \
        --shell /usr/sbin/nologin autograder \
    && install --directory --owner=autograder --group=autograder --mode=0700 /var/lib/autograder
COPY --from=builder /opt/venv /opt/venv
COPY docker/ /app/docker/
COPY exercises/ /app/exercises/
# Bytecode was compiled at install time, and at run time the root filesystem is read-only;
# unbuffered, the logs reach `docker logs` as they are written.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    AUTOGRADER_DATA_DIR=/var/lib/autograder
VOLUME ["/var/lib/autograder"]
WORKDIR /app
USER 10001:10001
EXPOSE 8000
# The API's liveness; the worker, which serves no HTTP, replaces it in docker-compose.yml.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "/app/docker/healthcheck.py"]
ENTRYPOINT ["/app/docker/start"]
CMD ["api"]
