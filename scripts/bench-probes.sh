#!/usr/bin/env bash
# Probe cost benchmark: BPF run time per hit of gospan's programs against an empty program
# on the same functions, and the example client's latency with no / empty / gospan probes.
# Usage: scripts/bench-probes.sh [calls-per-round] [rounds] [calls-in-flight]   (root; prints a table)
set -euo pipefail
cd "$(dirname "$0")/.."
examples/build.sh >/dev/null
mvn -B -q -ntp -pl receiver -am -DskipTests test-compile
mvn -B -q -ntp -pl receiver dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$PWD/receiver/target/test-classpath.txt" >/dev/null
cp=$(cat receiver/target/test-classpath.txt)
exec java -cp "receiver/target/test-classes:receiver/target/classes:$cp" \
  io.gospan.receiver.bench.ProbeCostBenchmark "$@"
