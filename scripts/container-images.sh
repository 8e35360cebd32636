#!/usr/bin/env bash
# Builds the images docker-compose.yml runs into the local podman's image store
# (scripts/container-engine.sh; scripts/install-container-engine.sh installs podman):
#
#   gospan:dev                    receiver/Dockerfile, context: the repository
#   gospan-examples:dev           examples/Dockerfile, context: examples/
#   jaegertracing/jaeger:2.13.0   scripts/jaeger.Dockerfile around the Jaeger release
#                                 scripts/jaeger.sh builds (the one the host tests run)
#
# Each is stored under the name Docker gives it (docker.io/library/gospan:dev, ...), which is
# what docker-compose, `podman run gospan:dev` and a Kubernetes node's containerd look up.
#
# No image registry is needed: the base images the Dockerfiles name (debian:bookworm for the build
# stages, debian:bookworm-slim for the run stages: the public images by default) are used from
# the store when there, else bootstrapped from Debian's packages (mmdebstrap --variant=minbase,
# the slim one with the public slim image's dpkg path excludes: no manual pages, docs, locales)
# and stored under the public names, so the Dockerfiles built here are the ones users build.
# Builds never pull (--pull=never).
#
# Cached: each image carries a label with a hash of its inputs (its Dockerfile, build context
# files, base image ids, the Jaeger binary); an image whose label matches is not built again.
# Inside a build, Maven's and Go's caches persist between builds (RUN --mount=type=cache, kept
# under $GOSPAN_CACHE/podman/tmp).
#
#   scripts/container-images.sh            build what is missing or stale
#   scripts/container-images.sh --force    build all three again, no layer reused (the bases are kept)
#
# Progress on stderr; the last stdout line lists the three images' full names, each followed by
# `=built` or `=cached`. Environment: GOSPAN_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/gospan).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache=${GOSPAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gospan}
force=false
build_opts=()
if [[ "${1:-}" == --force ]]; then
    force=true
    build_opts+=(--no-cache)
fi

note() { echo "container-images.sh: $*" >&2; }
die() { note "$*"; exit 1; }
podman() { "$here/scripts/container-engine.sh" podman "$@"; }

command -v mmdebstrap >/dev/null 2>&1 \
    || die "mmdebstrap is not installed (scripts/install-container-engine.sh installs it)"
mkdir -p "$cache/podman/tmp"
# One run at a time (the image store is shared; a second run then finds everything cached).
exec 9>"$cache/podman/images.lock"
flock 9

label=io.gospan.inputs

# bootstrap NAME [dpkg options...]: a Debian bookworm minbase root file system imported as NAME,
# with the apt and dpkg settings of the public images (debuerreotype's: no package caches or
# translations kept, compressed indexes, unsafe-io); built again when this recipe changed (a label
# records its hash).
bootstrap() {
    local name=$1; shift
    local recipe
    recipe=$( (declare -f bootstrap; printf '%s\n' "$@") | sha256sum | cut -d' ' -f1)
    if [[ "$(podman image inspect --format '{{index .Labels "io.gospan.bootstrap"}}' "$name" 2>/dev/null)" == "$recipe" ]]; then
        return
    fi
    note "bootstrapping $name from Debian's packages (mmdebstrap, 1-5 min)"
    local tar
    tar=$(mktemp "$cache/podman/tmp/rootfs.XXXXXX.tar")
    local opts=(--dpkgopt=force-unsafe-io)
    for o in "$@"; do opts+=("--dpkgopt=$o"); done
    # merged-usr: /usr merged by mmdebstrap's hook, as the public images are, not by Debian's
    # usrmerge package (which would bring perl, ~46 MB)
    mmdebstrap --quiet --variant=minbase --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
        --aptopt='DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; }' \
        --aptopt='Dir::Cache::pkgcache ""' --aptopt='Dir::Cache::srcpkgcache ""' \
        --aptopt='Acquire::GzipIndexes "true"' --aptopt='Acquire::Languages "none"' \
        --aptopt='Apt::AutoRemove::SuggestsImportant "false"' \
        "${opts[@]}" bookworm "$tar" \
        "deb http://deb.debian.org/debian bookworm main" \
        "deb http://deb.debian.org/debian bookworm-updates main" \
        "deb http://deb.debian.org/debian-security bookworm-security main" >&2 \
        || { rm -f "$tar"; die "mmdebstrap failed"; }
    podman import --quiet --change 'CMD ["bash"]' --change "LABEL io.gospan.bootstrap=$recipe" \
        --message "debian bookworm minbase, mmdebstrap (scripts/container-images.sh)" \
        "$tar" "$name" >/dev/null || { rm -f "$tar"; die "podman import $name failed"; }
    rm -f "$tar"
}

bootstrap docker.io/library/debian:bookworm
# What the public slim image's /etc/dpkg/dpkg.cfg.d/docker excludes (debuerreotype's slimify).
bootstrap docker.io/library/debian:bookworm-slim \
    'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/doc/*' \
    'path-include=/usr/share/doc/*/copyright' 'path-exclude=/usr/share/groff/*' \
    'path-exclude=/usr/share/info/*' 'path-exclude=/usr/share/locale/*' \
    'path-exclude=/usr/share/linda/*' 'path-exclude=/usr/share/lintian/overrides/*'
bases="$(podman image inspect --format '{{.Id}}' docker.io/library/debian:bookworm docker.io/library/debian:bookworm-slim | tr '\n' ' ')"

# files_hash DIR PATH...: hash of the names and contents of the files under PATH... (relative to
# DIR) that git tracks or would track (what .gitignore leaves out, build output, is left out), but
# tests (src/test: .dockerignore keeps them out of the build context too).
files_hash() {
    local dir=$1; shift
    (cd "$dir" && git ls-files -co --exclude-standard -z -- "$@" | grep -zv '/src/test/' | sort -z \
        | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

# The host's own CA certificates (/usr/local/share/ca-certificates: an organization's, or a
# TLS-intercepting egress proxy's, as on the machines CI runs on) are mounted into the builds, so
# that what the host can fetch over TLS (Maven Central, the Go module proxy) the builds can too:
# the ca-certificates package a stage installs adds them to its trust stores. Not an input of the
# Dockerfiles: a host without local CAs builds exactly what a user's does.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    build_opts+=(--volume /usr/local/share/ca-certificates:/usr/local/share/ca-certificates:ro)
fi

results=()
# image NAME INPUTS_HASH BUILD_ARGS...: builds NAME unless its label says INPUTS_HASH.
image() {
    local name=$1 hash=$2; shift 2
    if ! $force && [[ "$(podman image inspect --format "{{index .Labels \"$label\"}}" "$name" 2>/dev/null)" == "$hash" ]]; then
        note "cached: $name"
        results+=("$name=cached")
        return
    fi
    note "building $name"
    local start=$SECONDS
    TMPDIR=$cache/podman/tmp podman build --pull=never "${build_opts[@]}" --label "$label=$hash" -t "$name" "$@" >&2 \
        || die "building $name failed (podman build $*)"
    note "built $name in $((SECONDS - start)) s, $(podman image inspect --format '{{.Size}}' "$name") bytes"
    results+=("$name=built")
}

image docker.io/library/gospan:dev \
    "$(printf '%s\n' "$bases" "$(files_hash "$here" receiver/Dockerfile .dockerignore pom.xml offsets bpf receiver config/gospan.yaml)" | sha256sum | cut -d' ' -f1)" \
    -f "$here/receiver/Dockerfile" "$here"

image docker.io/library/gospan-examples:dev \
    "$(printf '%s\n' "$bases" "$(files_hash "$here/examples" .)" | sha256sum | cut -d' ' -f1)" \
    -f "$here/examples/Dockerfile" "$here/examples"

jaeger=$("$here/scripts/jaeger.sh" | tail -1)
jaeger_dir=$(cd "$cache" && go mod download -json github.com/jaegertracing/jaeger@"${JAEGER_MODULE_VERSION:-v1.76.0}" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
[[ -f "$jaeger_dir/cmd/jaeger/sampling-strategies.json" ]] || die "no sampling-strategies.json in the Jaeger module ($jaeger_dir)"
ctx=$(mktemp -d "$cache/podman/tmp/jaeger.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
cp "$jaeger" "$ctx/jaeger"
cp "$jaeger_dir/cmd/jaeger/sampling-strategies.json" "$here/scripts/jaeger.Dockerfile" "$ctx/"
release=${JAEGER_RELEASE:-v2.13.0}
image "docker.io/jaegertracing/jaeger:${release#v}" \
    "$(cd "$ctx" && printf '%s\n' "$bases" "$(sha256sum jaeger sampling-strategies.json jaeger.Dockerfile)" | sha256sum | cut -d' ' -f1)" \
    -f "$ctx/jaeger.Dockerfile" "$ctx"

echo "${results[*]}"
