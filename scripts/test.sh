#!/usr/bin/env bash
# The test command: installs missing build dependencies and the container engine, then builds
# everything (BPF objects, Java modules, the example Go programs the tests start, the container
# images of the docker-compose demo), runs every unit and integration test, then fuzzes the binary
# readers for a bounded time (GOSPAN_FUZZ_DURATION per target, default 30s). Integration tests
# load real BPF programs and run containers: run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# podman + docker-compose + mmdebstrap (ComposeIT; docs/containers.md). Writes no configuration.
scripts/install-container-engine.sh
# Go: the examples' go.mod names the toolchain it needs; an older `go` on PATH fetches it
# through the module proxy (GOTOOLCHAIN=auto).
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
examples/build.sh >/dev/null
# gospan:dev, gospan-examples:dev and Jaeger's image from the repository's Dockerfiles (cached:
# only what changed is built again); ComposeIT runs them.
images_start=$SECONDS
scripts/container-images.sh
echo "test.sh: container images ready in $((SECONDS - images_start)) s"
mvn -B -ntp verify "$@"
# A bounded fuzzing run of the binary readers, each of the five targets for 30 s (the build
# above already replayed every committed input): docs/go-binary-inspection.md, "Fuzzing".
scripts/fuzz.sh "${GOSPAN_FUZZ_DURATION:-30s}"
