#!/usr/bin/env bash
# The one build entry point for the example programs (greeter-server,
# greeter-client, greeter-relay) and their TLS certificates.
#
#   build.sh                         -> bin/greeter-{server,client,relay}, Go on PATH,
#                                       grpc-go and everything else as in go.mod
#   build.sh [--go V|PATH] [--grpc V] [--stripped] [--pin MOD@V]... [--out DIR]
#                                    -> bin/go<go>-grpc<grpc>[-stripped]/greeter-{server,client,relay}
#
# The directory the binaries are in is always the last line on stdout;
# everything else goes to stderr. Examples:
#
#   build.sh --go 1.22.12 --grpc v1.60.1             # bin/go1.22.12-grpc1.60.1
#   build.sh --go 1.16.15 --grpc v1.40.0 --stripped  # bin/go1.16.15-grpc1.40.0-stripped
#   build.sh --go /usr/lib/go-1.19/bin/go --grpc v1.40.0
#
# --go VERSION   use that Go toolchain through GOTOOLCHAIN=go<VERSION>: the go
#                command on PATH (must be >= 1.21) downloads it from the Go
#                module proxy (module golang.org/toolchain) into the module
#                cache. Toolchains back to go1.16 (and older) are served there
#                under exact patch versions, e.g. 1.16.15, 1.17.13, 1.19.13.
# --go PATH      use that go binary (e.g. Debian's /usr/lib/go-1.19/bin/go).
# --grpc VERSION build in a temporary copy of the module whose go.mod requires
#                only that grpc-go version, then `go mod tidy`, so that x/net,
#                protobuf, genproto, ... are the versions that grpc-go release
#                asked for (old grpc-go needs old x/net and old protobuf).
# --pin MOD@VER  (repeatable, with --grpc) also require MOD at VER before tidy;
#                for dependency versions the chosen toolchain cannot build.
# --stripped     link with -ldflags="-s -w" (no symbol table, no DWARF).
# greeter-relay  (the middle tier, cmd/greeter-relay) is built by every
#                build. It needs golang.org/x/sync (errgroup): a --grpc build
#                requires golang.org/x/sync@v0.3.0 (go line 1.17, errgroup
#                as today) unless --pin names another version; grpc-go's own
#                requirement wins when it is newer (v1.60.1: v0.4.0).
# --test         also run `go test ./...` with that toolchain and module
#                graph (never skipped as up to date).
# --out DIR      put the binaries in DIR instead.
#
# Incremental: a stamp in the output directory records a hash of the inputs
# (sources, go.mod/go.sum, this script, the options, the toolchain); when it
# matches and the binaries exist nothing is rebuilt. Concurrent runs for the
# same output directory wait for each other (flock); different ones run in
# parallel.
#
# Dependency pins: only one is automatic: when the chosen grpc-go does not
# require google.golang.org/protobuf itself (grpc-go < ~v1.36), protobuf
# v1.25.0 and github.com/golang/protobuf v1.4.3 are required (see below).
# Otherwise everything comes from grpc-go's go.mod via `go mod tidy`. Built
# and smoke-tested here (README.md has the full table):
#   go1.26.8 (PATH)    + grpc v1.85.0 from go.mod (x/net v0.60.0, protobuf v1.36.12)
#   go1.22.12          + grpc v1.60.1  (x/net v0.16.0, protobuf v1.31.0)
#   go1.19.13, 1.19.8 (Debian), 1.17.13, 1.16.15
#                      + grpc v1.40.0  (x/net 2020-08-22, protobuf v1.25.0)
#   go1.16.15          + grpc v1.32.0, v1.33.0 (x/net 2019-03-11, protobuf pinned)
# The minimum Go of a grpc-go release is its go.mod's go line: v1.32-v1.40
# 1.11, v1.45 1.14, v1.50-v1.57 1.17, v1.60-v1.63 1.19, v1.65 1.21, v1.69
# 1.22, v1.72 1.23, v1.78 1.24, v1.82 1.25, v1.85 1.26. Go >= 1.21 refuses a
# dependency whose go line is newer than itself, and Go < 1.21 cannot read
# "go 1.21.0"-style go lines or toolchain lines: pick a grpc-go that fits the
# toolchain, or --pin the offending module down.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
    exit "${1:-2}"
}
die() { echo "build.sh: $*" >&2; exit 1; }
note() { echo "build.sh: $*" >&2; }

go_spec=""
grpc_version=""
stripped=0
run_tests=0
out=""
pins=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --go) [[ $# -ge 2 ]] || usage; go_spec=$2; shift 2 ;;
        --go=*) go_spec=${1#*=}; shift ;;
        --grpc) [[ $# -ge 2 ]] || usage; grpc_version=$2; shift 2 ;;
        --grpc=*) grpc_version=${1#*=}; shift ;;
        --pin) [[ $# -ge 2 ]] || usage; pins+=("$2"); shift 2 ;;
        --pin=*) pins+=("${1#*=}"); shift ;;
        --stripped) stripped=1; shift ;;
        --test) run_tests=1; shift ;;
        --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
        --out=*) out=${1#*=}; shift ;;
        -h|--help) usage 0 ;;
        *) echo "build.sh: unknown argument: $1" >&2; usage ;;
    esac
done
if [[ -n "$grpc_version" && "$grpc_version" != v* ]]; then
    grpc_version=v$grpc_version
fi
if [[ ${#pins[@]} -gt 0 && -z "$grpc_version" ]]; then
    die "--pin needs --grpc (the in-tree build uses go.mod as it is)"
fi
for p in ${pins[@]+"${pins[@]}"}; do
    [[ "$p" == *@* ]] || die "--pin $p: want MODULE@VERSION"
done

# Used with grpc-go versions that do not require google.golang.org/protobuf.
default_protobuf_pins="google.golang.org/protobuf@v1.25.0 github.com/golang/protobuf@v1.4.3"
# The relay's errgroup, for --grpc builds: the newest golang.org/x/sync whose
# go line Go 1.17 accepts (later ones say go 1.18 and up; the newest, 1.25).
default_sync_pin="golang.org/x/sync@v0.3.0"

# --- the toolchain -----------------------------------------------------------
# go_cmd runs the chosen go command with the chosen GOTOOLCHAIN.
go_bin=go
toolchain=${GOTOOLCHAIN:-}
case "$go_spec" in
    "") ;;
    */*)
        [[ -x "$go_spec" ]] || die "--go $go_spec: not an executable"
        go_bin=$go_spec
        toolchain=local ;;
    *)
        go_spec=${go_spec#go}
        [[ "$go_spec" =~ ^1\.[0-9]+(\.[0-9]+|rc[0-9]+|beta[0-9]+)?$ ]] ||
            die "--go $go_spec: want a version like 1.22.12 or a path to a go binary"
        toolchain=go$go_spec ;;
esac
go_cmd() {
    if [[ -n "$toolchain" ]]; then
        GOTOOLCHAIN=$toolchain "$go_bin" "$@"
    else
        "$go_bin" "$@"
    fi
}

# The real version, asked where the build will run: in examples/ a go
# command >= 1.21 with GOTOOLCHAIN=auto may switch to the toolchain go.mod
# asks for; a --grpc build runs in a fresh module that never asks for one.
# This is also when GOTOOLCHAIN=goX downloads the toolchain.
version_dir=/
[[ -z "$grpc_version" ]] && version_dir=$here
go_version=$(cd "$version_dir" && GOFLAGS=-mod=mod go_cmd version) ||
    die "cannot run the go toolchain ${go_spec:-on PATH} (GOTOOLCHAIN=go1.x needs go >= 1.21 on PATH)"
go_version=$(awk '{print $3}' <<<"$go_version")   # "go version go1.22.12 linux/amd64"
go_minor=$(sed -E 's/^go1\.([0-9]+).*/\1/' <<<"$go_version")
[[ "$go_minor" =~ ^[0-9]+$ ]] || die "cannot parse go version $go_version"
# The sources use Go 1.16 APIs (signal.NotifyContext, os.ReadFile) and the
# module says "go 1.16", which Go 1.15 refuses.
[[ "$go_minor" -ge 16 ]] || die "$go_version is too old: the examples need Go >= 1.16"

# Override GOFLAGS from the environment and from the go env file: older go
# commands reject flags they do not know (-buildvcs is Go 1.18+), and a
# repository without commits makes VCS stamping fail.
goflags=()
if [[ "$go_minor" -ge 18 ]]; then
    goflags+=(-buildvcs=false)
fi

# --- the output directory ----------------------------------------------------
module_grpc=$(awk '$1 == "google.golang.org/grpc" {print $2}' "$here/go.mod")
[[ -n "$module_grpc" ]] || die "google.golang.org/grpc not found in $here/go.mod"
label_grpc=${grpc_version:-$module_grpc}
if [[ -z "$out" ]]; then
    if [[ -z "$go_spec" && -z "$grpc_version" && "$stripped" -eq 0 ]]; then
        out=$here/bin
    else
        out=$here/bin/$go_version-grpc${label_grpc#v}
        [[ "$stripped" -eq 1 ]] && out+=-stripped
    fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# One build per output directory at a time.
mkdir -p "$here/bin/.locks"
lock=$here/bin/.locks/$(printf '%s' "$out" | sha256sum | cut -c1-16).lock
if command -v flock >/dev/null 2>&1; then
    exec 9>"$lock"
    flock 9
fi

# Test certificates (idempotent, locked by certs.sh itself).
"$here/certs.sh" "$here/bin/certs"

# --- up to date? -------------------------------------------------------------
inputs_hash() {
    {
        printf 'go=%s bin=%s toolchain=%s grpc=%s stripped=%s pins=%s\n' \
            "$go_version" "$go_bin" "$toolchain" "$grpc_version" "$stripped" "${pins[*]+${pins[*]}}"
        cd "$here"
        find . -path ./bin -prune -o -type f \
            \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum -o -name build.sh \) -print |
            LC_ALL=C sort | xargs sha256sum
    } | sha256sum | cut -d' ' -f1
}
stamp=$(inputs_hash)
programs=(greeter-server greeter-client greeter-relay)
up_to_date=1
for p in "${programs[@]}"; do
    [[ -x "$out/$p" ]] || up_to_date=0
done
if [[ "$up_to_date" -eq 1 && "$run_tests" -eq 0 && -f "$out/.build-stamp" && "$(cat "$out/.build-stamp")" == "$stamp" ]]; then
    note "up to date: $out ($go_version, grpc $label_grpc)"
    echo "$out"
    exit 0
fi

# --- the module to build -----------------------------------------------------
if [[ -z "$grpc_version" ]]; then
    moddir=$here
    export GOFLAGS="-mod=readonly ${goflags[*]+${goflags[*]}}"
else
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/gospan-examples.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    moddir=$tmp/examples
    mkdir -p "$moddir"
    tar -C "$here" --exclude=./bin --exclude=./go.mod --exclude=./go.sum \
        -cf - . | tar -C "$moddir" -xf -
    # A fresh go.mod: only grpc-go (and any pins) are chosen here; tidy fills
    # in the rest from grpc-go's own requirements. "go 1.16" keeps the
    # language version at the oldest we support, so newer language features
    # fail to compile with every toolchain.
    {
        echo "module gospan.dev/examples"
        echo
        echo "go 1.16"
    } >"$moddir/go.mod"
    export GOFLAGS="-mod=mod ${goflags[*]+${goflags[*]}}"
    note "resolving grpc $grpc_version with $go_version in $moddir"
    # (Not in a subshell on the left of ||: that would switch off set -e.)
    resolve_failed() { die "could not resolve grpc $grpc_version with $go_version (see above; --pin may help)"; }
    # `go mod edit -require` rather than `go get`: the same on every go
    # version (go get in Go < 1.16 fails on a module root with no package).
    require() {
        local args=() m
        for m in "$@"; do args+=("-require=$m"); done
        (cd "$moddir" && go_cmd mod edit "${args[@]}") >&2 || resolve_failed
    }
    sync_pin=$default_sync_pin
    for p in ${pins[@]+"${pins[@]}"}; do
        [[ "$p" == golang.org/x/sync@* ]] && sync_pin=""
    done
    require "google.golang.org/grpc@$grpc_version" $sync_pin ${pins[@]+"${pins[@]}"}
    # grpc-go before ~v1.36 requires only github.com/golang/protobuf v1.3.x
    # (pre-APIv2), so google.golang.org/protobuf, which the generated code
    # imports, is not in its graph and tidy would add the newest one (too new
    # for old toolchains). Pin the pair grpc-go v1.36-v1.40 used: protobuf
    # v1.25.0 (Oct 2020) and golang/protobuf v1.4.3, the v1 API implemented on
    # top of it, which old grpc-go's codec needs to marshal APIv2 messages.
    if ! (cd "$moddir" && go_cmd list -m google.golang.org/protobuf) >/dev/null 2>&1; then
        note "google.golang.org/protobuf is not required by grpc $grpc_version; pinning $default_protobuf_pins"
        require $default_protobuf_pins
    fi
    (cd "$moddir" && go_cmd mod tidy) >&2 || resolve_failed
    note "dependencies: $(cd "$moddir" && go_cmd list -m all 2>/dev/null |
        grep -E '^(google.golang.org/(grpc|protobuf|genproto)|golang.org/x/(net|sync)) ' | tr '\n' ';' || true)"
fi

# --- build -------------------------------------------------------------------
ldflags=()
if [[ "$stripped" -eq 1 ]]; then
    ldflags=("-ldflags=-s -w")
fi
rm -f "$out/.build-stamp"
for p in "${programs[@]}"; do
    note "building $p with $go_version, grpc $label_grpc$([[ $stripped -eq 1 ]] && echo ', stripped')"
    (cd "$moddir" && go_cmd build ${ldflags[@]+"${ldflags[@]}"} -o "$out/.$p.tmp" "./cmd/$p") >&2 || {
        rm -f "$out/.$p.tmp"
        if [[ -z "$grpc_version" ]]; then
            die "building $p failed; if $go_version is older than go.mod's go line, add --grpc with an older grpc-go"
        fi
        die "building $p failed"
    }
    mv -f "$out/.$p.tmp" "$out/$p"
done
echo "$stamp" >"$out/.build-stamp"
if [[ "$run_tests" -eq 1 ]]; then
    note "testing with $go_version, grpc $label_grpc"
    (cd "$moddir" && go_cmd test -count=1 ./...) >&2 || die "tests failed with $go_version, grpc $label_grpc"
fi
echo "$out"
