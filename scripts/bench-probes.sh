#!/usr/bin/env bash
# Probe cost benchmark: BPF run time per hit of gospan's programs against an empty program
# on the same functions, and the example client's latency with no / empty / gospan probes.
# Usage: scripts/bench-probes.sh [calls-per-round] [rounds] [calls-in-flight] [GOMAXPROCS]   (root; prints a table)
#   BASELINE_REV=<git rev>: also runs that commit's grpc.bpf.c, alternating with this one, and
#   prints the ratio per round (an A/B of a change, the machine's drift cancelled out).
set -euo pipefail
cd "$(dirname "$0")/.."
examples/build.sh >/dev/null
# in one reactor run, so gospan's own modules resolve to their target/classes, not to whatever
# snapshot ~/.m2 holds (none on a new machine)
mvn -B -q -ntp -pl receiver -am -DskipTests test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$PWD/receiver/target/test-classpath.txt" >/dev/null
cp=$(cat receiver/target/test-classpath.txt)
if [ -n "${BASELINE_REV:-}" ]; then
  tmp=$(mktemp -d)
  base=receiver/target/classes/io/gospan/bpf/grpc-baseline.bpf.o
  trap 'rm -rf "$tmp" "$base"' EXIT
  git archive "$BASELINE_REV" bpf | tar -x -C "$tmp"
  mkdir -p "$tmp/bpf/build/gen" && cp bpf/build/gen/vmlinux.h "$tmp/bpf/build/gen/"
  make -s -C "$tmp/bpf" build/grpc.bpf.o
  cp "$tmp/bpf/build/grpc.bpf.o" "$base"
  export GOSPAN_BENCH_BASELINE=grpc-baseline.bpf.o BASELINE_REV
fi
java -cp "receiver/target/test-classes:receiver/target/classes:$cp" \
  io.gospan.receiver.bench.ProbeCostBenchmark "$@"
