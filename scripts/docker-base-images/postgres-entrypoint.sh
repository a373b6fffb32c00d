#!/bin/bash
# The official postgres image's contract, as far as docker-compose.yml relies on it:
# an empty PGDATA is initialised with the superuser POSTGRES_USER (default postgres), password
# POSTGRES_PASSWORD (required, as there), and the database POSTGRES_DB (default POSTGRES_USER);
# a PGDATA that already holds a cluster is started as it is. The server listens on every
# interface of the container, password-checked (scram-sha-256) from anywhere but the local socket.
set -euo pipefail

if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    if [ -z "${POSTGRES_PASSWORD:-}" ]; then
        echo "Error: Database is uninitialized and superuser password is not specified." >&2
        echo "       You must specify POSTGRES_PASSWORD to a non-empty value for the superuser." >&2
        exit 1
    fi
    user="${POSTGRES_USER:-postgres}"
    db="${POSTGRES_DB:-$user}"
    initdb --username="$user" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") \
        --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8
    printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
    # A server on the socket only while the database is created, as the official image does.
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
    if [ "$db" != postgres ]; then
        psql -v ON_ERROR_STOP=1 --username="$user" --dbname=postgres \
            -c "CREATE DATABASE \"$db\""
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop
fi

if [ "$1" = postgres ]; then
    exec postgres -c listen_addresses='*' "${@:2}"
fi
exec "$@"
