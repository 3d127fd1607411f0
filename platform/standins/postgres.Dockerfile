# A stand-in for the official postgres image, from Debian's own packages, for hosts that cannot
# pull from a registry. Same contract as the parts of the official image compose.yaml uses:
# POSTGRES_DB / POSTGRES_USER / POSTGRES_PASSWORD create the database on first start, the data
# lives in /var/lib/postgresql/data, `pg_isready` is on PATH, port 5432 with password auth.
#   docker build -f platform/standins/postgres.Dockerfile -t quatresept-local/postgres:15 platform/standins
#   POSTGRES_IMAGE=quatresept-local/postgres:15 docker compose up -d
ARG DEBIAN_IMAGE=debian:bookworm-slim
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql \
    && chmod 700 /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data LANG=C.UTF-8
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["postgres-entrypoint"]
CMD ["postgres"]
