#!/usr/bin/env bash
# Builds Jaeger v2 (the all-in-one `jaeger` binary, an OpenTelemetry Collector distribution
# with Jaeger's storage and query extensions) from the Go module proxy, caches it, and
# optionally runs it with config/jaeger-e2e.yaml. The end-to-end tests (Jaeger.java) and the
# local demo use it; no Docker needed.
#
#   scripts/jaeger.sh                 build (or find in the cache); last stdout line = binary path
#   scripts/jaeger.sh run [ARGS...]   build, then exec it with config/jaeger-e2e.yaml:
#                                     OTLP gRPC 127.0.0.1:4317, OTLP HTTP 127.0.0.1:4318,
#                                     query API/UI 127.0.0.1:16686, in-memory storage.
#                                     ARGS go to jaeger (e.g. --set=...); addresses move with
#                                     JAEGER_OTLP_GRPC, JAEGER_OTLP_HTTP, JAEGER_QUERY_HTTP,
#                                     JAEGER_QUERY_GRPC, JAEGER_HEALTH (see the config file).
#
# Environment: JAEGER_MODULE_VERSION and JAEGER_RELEASE (defaults below), GOSPAN_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/gospan). Progress goes to stderr.
#
# Why not `go install github.com/jaegertracing/jaeger/cmd/jaeger@VERSION`: go install refuses
# a module whose go.mod has replace directives, and every version of the module that has
# Jaeger v2 (cmd/jaeger) has `replace github.com/Shopify/sarama => ... v1.33.0`. The module
# proxy reachable here serves only v1.42.0 (no replace, but Jaeger v1 only: no cmd/jaeger),
# v1.61.0, v1.62.0 and v1.76.0 (all with the replace), and no pseudo-versions (commit
# queries are refused); Jaeger's v2.x tags are not module versions (the path has no /v2).
# So this script does what go install would do, with the replace honoured:
# `go mod download` the pinned release (checked against the checksum database), then build
# ./cmd/jaeger inside it as the main module, with its own go.mod, replace and go.sum
# (-mod=readonly: nothing is re-resolved). v1.76.0 is the release tagged v2.13.0 too
# (2025-12-03; go 1.24.6, builds with the Go here; GOTOOLCHAIN=auto fetches a newer
# toolchain if the go on PATH is older). The UI assets are not in the module (they are an
# npm build), so the UI at :16686 is Jaeger's placeholder page; the HTTP APIs are complete.
set -euo pipefail

version=${JAEGER_MODULE_VERSION:-v1.76.0}
# The Jaeger release of that module version (each Jaeger release tags v1.x and v2.y together);
# stamped into the binary (`jaeger version`) the way Jaeger's own Makefile does.
release=${JAEGER_RELEASE:-v2.13.0}
release_date=${JAEGER_RELEASE_DATE:-2025-12-03T16:07:08Z}
module=github.com/jaegertracing/jaeger
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${GOSPAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gospan}/jaeger/$version
bin=$cache/jaeger

note() { echo "jaeger.sh: $*" >&2; }
die() { note "$*"; exit 1; }

mode=build
if [[ $# -gt 0 ]]; then
    case "$1" in
        run) mode=run; shift ;;
        build) shift ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown command '$1' (build | run)" ;;
    esac
fi

build() {
    command -v go >/dev/null 2>&1 || die "go is not on PATH (scripts/install-deps.sh installs it)"
    mkdir -p "$cache"
    # One build per version at a time; the others wait and then find the binary.
    if command -v flock >/dev/null 2>&1; then
        exec 9>"$cache/.lock"
        flock 9
    fi
    if [[ -x "$bin" ]]; then
        note "cached: $bin"
        return
    fi
    # auto: the go on PATH if it is new enough for the module's go line, else the toolchain
    # that line names, from the module proxy.
    export GOTOOLCHAIN=auto
    export GOFLAGS="-mod=readonly -buildvcs=false"
    note "downloading $module@$version"
    local dir
    dir=$(go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
    [[ -n "$dir" && -f "$dir/go.mod" ]] || die "go mod download $module@$version gave no directory"
    note "building $module/cmd/jaeger@$version in $dir (a few minutes the first time)"
    local v=$module/internal/version
    (cd "$dir" && go build -trimpath \
        -ldflags "-X $v.latestVersion=$release -X $v.date=$release_date -X $v.commitSHA=module-$version" \
        -o "$bin.tmp" ./cmd/jaeger) >&2 || {
        rm -f "$bin.tmp"
        die "building jaeger $version failed"
    }
    mv -f "$bin.tmp" "$bin"
    note "built $bin"
}

build
if [[ "$mode" == run ]]; then
    exec "$bin" --config "$here/config/jaeger-e2e.yaml" "$@"
fi
echo "$bin"
