#!/usr/bin/env bash
# Load benchmark: the example server under fixed workloads without gospan, with empty uprobes at
# gospan's attach points (the floor) and with gospan attached, alternating, several rounds;
# prints calls/s, p50/p99, target CPU per call, and the sidecar's CPU per span (with and without
# its JIT compiler threads, and by thread), RSS, events lost, spans dropped and spans the OTLP/gRPC
# receiver (in the benchmark's JVM; it only counts, off the wire format) did not get, and the
# receiver's own CPU per span; one SUMMARY line per build and workload at the end. Each sidecar
# start is warmed up first (20,000 calls, repeated up to 8 times until its JIT compiler threads
# take < 10 % of its CPU, then the workload once). Usage: scripts/bench-load.sh [rounds]   (root)
# -Dgospan.bench.floor=false (in GOSPAN_BENCH_OPTS) leaves the empty-uprobes runs out;
# -Dgospan.bench.steady=120 runs each workload again and again for 120 s before it is measured (issue 37's
#   targets count the JIT after 2 minutes of steady load; the JIT's share by 30 s goes to stderr);
# -Dgospan.bench.repeat=9 measures each start's workload 9 times back to back (the median and range of
#   the runs: the JIT's bursts after the steady load make one 5-s run vary);
# -Dgospan.bench.workloads="PREFIX;PREFIX" measures only the workloads whose names start so (e.g. "unary, 16").
# -Dgospan.bench.ratios=1,0.1,0.01 measures each build once per sampling ratio (traceidratio), alternating in the run;
# GOSPAN_BENCH_JARS=before=/path/a.jar,after=/path/b.jar measures several builds alternating in the run;
# GOSPAN_BENCH_OPTS adds Java system properties without spaces, e.g. -Dgospan.bench.exporter=otlp
# (a build's own JVM settings, -Dgospan.bench.jvm.LABEL="...": run the last line's java command,
# docs/benchmarks.md shows it).
# GOSPAN_BENCH_CLASS: another benchmark class of receiver/src/test/.../bench with the same set-up (scripts/bench-cold-start.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cp=$(scripts/bench-classpath.sh)
exec java ${GOSPAN_BENCH_JARS:+-Dgospan.bench.jars=$GOSPAN_BENCH_JARS} ${GOSPAN_BENCH_OPTS:-} -cp "receiver/target/test-classes:receiver/target/classes:$cp" io.gospan.receiver.bench.${GOSPAN_BENCH_CLASS:-LoadBenchmark} "$@"
