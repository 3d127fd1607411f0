#!/bin/sh
# Entrypoint of the Debian postgres stand-in: on an empty data folder, initdb with
# POSTGRES_USER / POSTGRES_PASSWORD and create POSTGRES_DB; then run the server on every address
# (password auth from other hosts, trust on the local socket only).
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
if [ "${1:-postgres}" != postgres ]; then
    exec "$@"
fi
[ $# -gt 0 ] && shift
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" --encoding=UTF8 \
        --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [ "$POSTGRES_DB" != postgres ]; then
        createdb -U "$POSTGRES_USER" "$POSTGRES_DB"
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    echo "postgres stand-in: database $POSTGRES_DB initialised"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
