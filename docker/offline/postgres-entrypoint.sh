#!/bin/sh
# The official postgres image's contract, for the stand-in: on a first start (an empty PGDATA),
# a cluster whose superuser is POSTGRES_USER (default postgres) with POSTGRES_PASSWORD, a
# database POSTGRES_DB (default: the user's name), password (scram-sha-256) logins from the
# network and trusted ones on the container's own socket; then the server, in the foreground, as
# the user postgres. A PGDATA that holds a cluster is started as it is.
set -eu

: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"

if [ "${1:-}" != postgres ]; then
    exec "$@"
fi

if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 0700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups -- "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
        echo "postgres: POSTGRES_PASSWORD is required for a new cluster" >&2
        exit 1
    fi
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust \
        --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA" >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    # The database, made on the socket alone before the server listens on the network.
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [ "$POSTGRES_DB" != postgres ]; then
        # From stdin: psql interpolates :"db" (quoted as an identifier) there, not in --command.
        echo 'CREATE DATABASE :"db";' | psql --no-psqlrc --quiet --username="$POSTGRES_USER" \
            --dbname=postgres --set=ON_ERROR_STOP=1 --set=db="$POSTGRES_DB" >/dev/null
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "postgres: a new cluster in $PGDATA, user $POSTGRES_USER, database $POSTGRES_DB"
fi

exec "$@" -c listen_addresses='*'
