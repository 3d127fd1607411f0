#!/bin/sh
# Entrypoint of the Debian redis stand-in: `redis-server ARGS` listens on every address with
# protected mode off and its files in /data (the official image's defaults); anything else runs.
set -eu
if [ "${1:-}" = redis-server ]; then
    shift
    exec redis-server --bind '* -::*' --protected-mode no --dir /data "$@"
fi
exec "$@"
