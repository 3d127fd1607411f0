#!/bin/sh
# Entrypoint of the platform image: `web`, `worker`, `beat`, `migrate`, or any command.
set -eu
case "${1:-web}" in
  web)
    python manage.py migrate --noinput
    exec gunicorn config.wsgi --bind 0.0.0.0:8000 --workers "${WEB_CONCURRENCY:-3}" \
      --access-logfile - --forwarded-allow-ips '*'
    ;;
  worker)
    # One process per core by default; every worker on every host takes matches off the same
    # Redis queue. Scale with `docker compose up --scale worker=N` or more hosts.
    # Any further arguments go to celery (e.g. `worker -Q arena-control`).
    shift || true
    exec celery -A config worker --loglevel=INFO --concurrency="${WORKER_CONCURRENCY:-2}" "$@"
    ;;
  beat)
    exec celery -A config beat --loglevel=INFO \
      --schedule /var/lib/quatresept/celerybeat-schedule
    ;;
  migrate)
    exec python manage.py migrate --noinput
    ;;
  *)
    exec "$@"
    ;;
esac
