#!/usr/bin/env bash
# The container engine the project's own scripts and tests use: Debian's podman
# (scripts/install-container-engine.sh installs it), with the project's settings, which live in a
# containers.conf of the project's own cache (CONTAINERS_CONF), never in /etc/containers: running
# this script changes nothing in the host's podman configuration. docs/containers.md says why
# podman and what each setting is for.
#
#   scripts/container-engine.sh podman ARGS...   podman with the project's settings
#   scripts/container-engine.sh conf             writes (if needed) and prints the containers.conf path
#   scripts/container-engine.sh serve SOCKET     podman's Docker-compatible API on unix socket SOCKET
#                                                (foreground, until killed): what docker-compose and
#                                                testcontainers talk to (DOCKER_HOST=unix://SOCKET)
#   scripts/container-engine.sh compose ARGS...  docker-compose (Debian's 1.29) against that API:
#                                                starts `serve` on $GOSPAN_CACHE/podman/docker.sock
#                                                first if nothing answers there, e.g.
#                                                `scripts/container-engine.sh compose up`; run in
#                                                the repository with no COMPOSE_FILE set, it adds
#                                                the `host-limits` override to docker-compose.yml
#   scripts/container-engine.sh host-limits      writes (if needed) and prints a compose override
#                                                giving the demo's gospan services this host's hard
#                                                memlock and nofile limits and nproc 4096: a host
#                                                without CAP_SYS_RESOURCE cannot grant the demo's
#                                                `memlock: -1`, and once a service sets any ulimit
#                                                podman asks for more files and processes than such
#                                                a host allows (docs/containers.md)
#   scripts/container-engine.sh stop-service     stops the API service `compose` started
#
# The settings (containers.conf):
#   runtime = "runc"            crun (podman's default where installed) refuses hosts whose cgroup
#                               hierarchy is hybrid (cgroup v1 controllers + the v2 unified mount)
#   cgroup_manager = "cgroupfs" no systemd needed as the init system
#   default_ulimits             nofile and nproc at most the host's hard limits: podman otherwise
#                               asks for more, and a host without CAP_SYS_RESOURCE then refuses
#                               to start any container ("setrlimit ... operation not permitted")
#   network_backend = "netavark" explicitly: a CNI configuration under /etc/cni/net.d (a
#                               Kubernetes node's) would otherwise switch podman to CNI
#   events_logger = "file"      no journald needed
#
# Environment: GOSPAN_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/gospan).
set -euo pipefail

cache=${GOSPAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gospan}/podman
conf=$cache/containers.conf

note() { echo "container-engine.sh: $*" >&2; }
die() { note "$*"; exit 1; }

write_conf() {
    command -v podman >/dev/null 2>&1 \
        || die "podman is not installed (scripts/install-container-engine.sh installs it)"
    mkdir -p "$cache"
    local nofile nproc
    nofile=$(ulimit -Hn)
    nproc=$(ulimit -Hu)
    [[ "$nofile" == unlimited || "$nofile" -gt 1048576 ]] && nofile=1048576
    [[ "$nproc" == unlimited || "$nproc" -gt 4096 ]] && nproc=4096
    local tmp
    tmp=$(mktemp "$cache/containers.conf.XXXXXX")
    cat >"$tmp" <<EOF
# Written by scripts/container-engine.sh (the project's podman settings; see that script).
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"

[network]
network_backend = "netavark"
EOF
    if cmp -s "$tmp" "$conf"; then rm -f "$tmp"; else mv -f "$tmp" "$conf"; fi
}

# host_limits: the override `host-limits` prints.
host_limits() {
    mkdir -p "$cache"
    local memlock nofile nproc
    memlock=$(ulimit -Hl)
    [[ "$memlock" == unlimited ]] && memlock=-1 || memlock=$((memlock * 1024))
    nofile=$(ulimit -Hn)
    [[ "$nofile" == unlimited || "$nofile" -gt 1048576 ]] && nofile=1048576
    nproc=$(ulimit -Hu)
    [[ "$nproc" == unlimited || "$nproc" -gt 4096 ]] && nproc=4096
    local file=$cache/host-limits.yml tmp
    tmp=$(mktemp "$cache/host-limits.yml.XXXXXX")
    {
        echo "# Written by scripts/container-engine.sh: this host's limits for the demo's gospan services."
        echo "services:"
        for s in gospan-server gospan-client; do
            printf '  %s:\n    ulimits:\n      memlock: %s\n      nofile: %s\n      nproc: %s\n' "$s" "$memlock" "$nofile" "$nproc"
        done
    } >"$tmp"
    if cmp -s "$tmp" "$file"; then rm -f "$tmp"; else mv -f "$tmp" "$file"; fi
    echo "$file"
}

socket=$cache/docker.sock
pidfile=$cache/service.pid

service_up() {
    [[ -S "$socket" ]] && curl -sf --unix-socket "$socket" http://d/_ping >/dev/null 2>&1
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case "$cmd" in
    host-limits)
        host_limits
        ;;
    conf)
        write_conf
        echo "$conf"
        ;;
    podman)
        write_conf
        CONTAINERS_CONF=$conf exec podman "$@"
        ;;
    serve)
        [[ $# -eq 1 ]] || die "usage: serve SOCKET"
        write_conf
        mkdir -p "$(dirname "$1")"
        rm -f "$1"
        CONTAINERS_CONF=$conf exec podman system service --time=0 "unix://$1"
        ;;
    compose)
        command -v docker-compose >/dev/null 2>&1 \
            || die "docker-compose is not installed (scripts/install-container-engine.sh installs it)"
        if ! service_up; then
            write_conf
            CONTAINERS_CONF=$conf setsid podman system service --time=0 "unix://$socket" \
                >"$cache/service.log" 2>&1 </dev/null &
            echo $! >"$pidfile"
            for _ in $(seq 100); do service_up && break; sleep 0.1; done
            service_up || die "podman system service did not answer on $socket ($cache/service.log)"
            note "podman API service on $socket (pid $(cat "$pidfile"); stop it with: $0 stop-service)"
        fi
        if [[ -z "${COMPOSE_FILE:-}" && -f docker-compose.yml && -f scripts/container-engine.sh ]]; then
            COMPOSE_FILE=docker-compose.yml:$(host_limits)
            export COMPOSE_FILE
        fi
        DOCKER_HOST=unix://$socket exec docker-compose "$@"
        ;;
    stop-service)
        if [[ -f "$pidfile" ]]; then
            kill "$(cat "$pidfile")" 2>/dev/null || true
            rm -f "$pidfile" "$socket"
        fi
        ;;
    *)
        sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2
        exit 2
        ;;
esac
