# Stands in for redis:7-bookworm: Debian's Redis 7, run as the official image runs it: as the
# user redis, in /data (a volume), reachable from the other containers (no protected mode), and
# with the default snapshots, so a named volume keeps the broker's queue across a restart.
ARG BASE_IMAGE=autograder-offline/debian:bookworm
FROM ${BASE_IMAGE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server redis-tools \
    && rm -rf /var/lib/apt/lists/* \
    && install --directory --owner=redis --group=redis --mode=0750 /data
VOLUME ["/data"]
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no", "--dir", "/data"]
