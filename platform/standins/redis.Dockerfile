# A stand-in for the official redis image, from Debian's own packages, for hosts that cannot pull
# from a registry. Same contract as the parts of the official image compose.yaml uses: the
# command `redis-server ...` with its data in /data, reachable from the other containers
# (protected mode off, as in the official image), `redis-cli` on PATH.
#   docker build -f platform/standins/redis.Dockerfile -t quatresept-local/redis:7 platform/standins
#   REDIS_IMAGE=quatresept-local/redis:7 docker compose up -d
ARG DEBIAN_IMAGE=debian:bookworm-slim
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data && chown redis:redis /data
COPY redis-entrypoint.sh /usr/local/bin/redis-entrypoint
USER redis
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["redis-entrypoint"]
CMD ["redis-server"]
