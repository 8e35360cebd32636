#!/usr/bin/env bash
# What holding execs (discovery.hold_new_binaries) adds to an exec, against gospan without the hold
# in the same run, alternating: a binary judged already, a new non-Go binary, a new Go binary linking
# grpc-go (ExecHoldBenchmark). Each exec is timed fork to exit by examples/cmd/execbench.
# Usage: scripts/bench-exec-hold.sh [rounds]   (root; default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
examples/build.sh >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd examples && GOTOOLCHAIN=${GOTOOLCHAIN:-auto} go build -o "$work/execbench" ./cmd/execbench)
# in one reactor run, so gospan's own modules resolve to their target/classes, not to whatever
# snapshot ~/.m2 holds (none on a new machine)
mvn -B -q -ntp -pl receiver -am -DskipTests test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$PWD/receiver/target/test-classpath.txt" >/dev/null
cp=$(cat receiver/target/test-classpath.txt)
java -Dexecbench="$work/execbench" -cp "receiver/target/test-classes:receiver/target/classes:$cp" \
  io.gospan.receiver.bench.ExecHoldBenchmark "$@"
