#!/usr/bin/env bash
# Idle benchmark: the sidecar tracing the example server, which nobody calls after a 20,000-call
# warm-up; its CPU (% of a core) and wake-ups per second, in all and per thread, over a window
# 10 s after the warm-up and one 60 s after it (20 s each), builds alternating over several
# rounds; one SUMMARY line per build and window. Usage: scripts/bench-idle.sh [rounds]   (root)
# GOSPAN_BENCH_JARS=before=/path/a.jar,after=/path/b.jar measures several builds alternating;
# GOSPAN_BENCH_OPTS adds Java system properties without spaces (a build's own JVM settings:
# -Dgospan.bench.jvm.LABEL="...", as for scripts/bench-load.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cp=$(scripts/bench-classpath.sh)
exec java ${GOSPAN_BENCH_JARS:+-Dgospan.bench.jars=$GOSPAN_BENCH_JARS} ${GOSPAN_BENCH_OPTS:-} -cp "receiver/target/test-classes:receiver/target/classes:$cp" io.gospan.receiver.bench.IdleBenchmark "$@"
