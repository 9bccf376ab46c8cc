# One image for the API and the grading workers; docker-compose.yml gives each its command.
# The builder installs the project into a venv; the runtime stage keeps that venv and the few
# files read at run time (the exercise catalog, the start and health-check scripts), no sources,
# no compilers, no pip cache.

# Both stages on one base: the venv's python is a link to the base image's interpreter.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
# torch's CPU build, from PyTorch's own wheel index: the default index serves the CUDA build,
# several GB that a CPU-only grader never uses. docker/install.sh takes it for torch alone.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
WORKDIR /src
# The context is what .dockerignore lets through: the package sources, the catalog, docker/.
COPY . .
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
