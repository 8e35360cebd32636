#!/usr/bin/env bash
# The test command: installs missing build dependencies, then builds everything
# (BPF objects, Java modules, the example Go programs the tests start) and runs every
# unit and integration test. Integration tests load real BPF programs: run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Go: the examples' go.mod names the toolchain it needs; an older `go` on PATH fetches it
# through the module proxy (GOTOOLCHAIN=auto).
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
examples/build.sh >/dev/null
mvn -B -ntp verify "$@"
