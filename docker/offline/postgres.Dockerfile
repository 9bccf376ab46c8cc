# Stands in for postgres:16-bookworm: Debian's PostgreSQL 15 (bookworm's), with an entrypoint
# that honours POSTGRES_USER, POSTGRES_DB and POSTGRES_PASSWORD on a first start, as the
# official image's does. A data directory is tied to its major version: one made by this image
# does not open under the official 16 (dump and restore to switch).
ARG BASE_IMAGE=autograder-offline/debian:bookworm
FROM ${BASE_IMAGE}
# Debian's package would make a cluster of its own at install: the entrypoint makes the one used.
RUN mkdir -p /etc/postgresql-common \
    && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf \
    && apt-get update \
    && apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && install --directory --owner=postgres --group=postgres --mode=0700 /var/lib/postgresql/data \
    && install --directory --owner=postgres --group=postgres --mode=2775 /var/run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data \
    LANG=C.UTF-8
VOLUME ["/var/lib/postgresql/data"]
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
