#!/usr/bin/env bash
# What holding execs (discovery.hold_new_binaries) adds to an exec, against gospan without the hold
# in the same run, alternating: a binary judged already, a new non-Go binary, a new Go binary linking
# grpc-go (ExecHoldBenchmark). Each exec is timed fork to exit by examples/cmd/execbench.
# First, what the exec notice's raw tracepoint adds to every exec: this build's against no gospan and,
# with BASELINE_REV=<git rev>, against that commit's (each object loaded alone, alternating).
# Usage: [BASELINE_REV=<rev>] scripts/bench-exec-hold.sh [rounds]   (root; default 3)
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
if [ -n "${BASELINE_REV:-}" ]; then
  base=receiver/target/classes/io/gospan/bpf/grpc-baseline.bpf.o
  trap 'rm -rf "$work" "$base"' EXIT
  git archive "$BASELINE_REV" bpf | tar -x -C "$work"
  mkdir -p "$work/bpf/build/gen" && cp bpf/build/gen/vmlinux.h "$work/bpf/build/gen/"
  make -s -C "$work/bpf" build/grpc.bpf.o
  cp "$work/bpf/build/grpc.bpf.o" "$base"
  export GOSPAN_BENCH_BASELINE=grpc-baseline.bpf.o BASELINE_REV
fi
java -Dexecbench="$work/execbench" -cp "receiver/target/test-classes:receiver/target/classes:$cp" \
  io.gospan.receiver.bench.ExecHoldBenchmark "$@"
