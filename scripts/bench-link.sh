#!/usr/bin/env bash
# Linking across gospans: what it costs (docs/benchmarks.md, "Linking across gospans").
# Three network namespaces (greeter-client -> greeter-relay -> greeter-server, one tier and one
# `gospan run` each, as LinkAcrossNamespacesIT builds them), rounds alternating link.enabled true
# and false with fresh gospans; per round the gospan JVMs' CPU per span exported, the questions
# sent per server span and the time from a server span's end to its export (p50, p99).
#
# Usage: scripts/bench-link.sh [rounds-per-mode] [calls-per-second] [window-seconds]
#   (root: BPF and ip netns; defaults 3 100 10). On a shared machine run it under
#   flock /work/bench.lock (or any lock the other benchmarks take). GOSPAN_BENCH_OPTS passes
#   system properties, e.g. -Dgospan.bench.jvm="-XX:StartFlightRecording=filename=/tmp/g-%p.jfr"
#   to profile the gospan JVMs.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "bench-link.sh: run as root (BPF, ip netns)" >&2; exit 1; }
examples/build.sh >/dev/null
mvn -B -q -ntp -pl receiver -am -DskipTests package
mvn -B -q -ntp -pl receiver -am -DskipTests test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$PWD/receiver/target/test-classpath.txt" >/dev/null
cp=$(cat receiver/target/test-classpath.txt)
exec java ${GOSPAN_BENCH_OPTS:-} -cp "receiver/target/test-classes:receiver/target/classes:$cp" io.gospan.receiver.bench.LinkBenchmark "$@"
