# Stands in for node:22-bookworm-slim in the web stage: Debian's Node 18 and npm, enough for
# `npm ci` from the lock file and esbuild. Nothing of it reaches the project's runtime image.
ARG BASE_IMAGE=autograder-offline/debian:bookworm
FROM ${BASE_IMAGE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm ca-certificates \
    && rm -rf /var/lib/apt/lists/*
ENV LANG=C.UTF-8
CMD ["node"]
