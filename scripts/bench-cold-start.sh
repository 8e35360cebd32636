#!/usr/bin/env bash
# Cold-start benchmark: the example server under a steady load (1,000 and 20,000 spans/s) before
# gospan starts; per start: exec → both programs traced, exec → the first span at the OTLP
# receiver, the start-up stages from the sidecar's log, and over the window after the attach the
# spans shed, dropped at the queue's bound, events lost, spans finished, received and expected.
# Builds alternate (ColdStartBenchmark's header). Usage: scripts/bench-cold-start.sh [starts]  (root)
# GOSPAN_BENCH_JARS=before=/path/a.jar,after=/path/b.jar: several builds alternating in the run;
# GOSPAN_BENCH_OPTS: -Dgospan.bench.window=SECONDS (60), -Dgospan.bench.rates=1000,20000 (spans/s);
# a build's own JVM settings, -Dgospan.bench.jvm.LABEL="...", as for scripts/bench-load.sh.
GOSPAN_BENCH_CLASS=ColdStartBenchmark exec "$(dirname "$0")/bench-load.sh" "$@"
