#!/usr/bin/env bash
# The export path's floor: what the OpenTelemetry SDK's BatchSpanProcessor and OTLP/gRPC exporter
# (grpc-java over Netty) alone cost in a JVM with the sidecar's recommended settings, fed with
# ready-made spans shaped like gospan's, exporting to the load benchmark's counting receiver:
# CPU per span (by thread, with and without the JIT compiler threads and the thread that makes the
# spans), RSS under load, idle CPU, spans lost; at 20,000 and 1,000 spans/s, a fresh JVM per rate
# and round. The part of the sidecar's CPU and RSS that gospan's own code cannot remove
# (docs/benchmarks.md, "The export path's floor"). Usage: scripts/bench-export-floor.sh [rounds]
# GOSPAN_BENCH_OPTS adds Java system properties without spaces: -Dgospan.bench.rates=20000,
# -Dgospan.bench.jar=/path/gospan.jar (another build's jar; the SDK and grpc-java it carries),
# -Dgospan.bench.senders=grpc-java,http-jdk,grpc-okhttp,http-okhttp (the OTLP exporter's senders to
# compare, alternating; default grpc-java; the OkHttp ones are resolved from scripts/okhttp-sender).
# -Dgospan.bench.steady=120: 120 s at the measured rate before each measured run, as bench-load.sh's;
# -Dgospan.bench.repeat=9: 9 measured runs per child, back to back, as bench-load.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -ntp -DskipTests package
# in one reactor run, so gospan's own modules resolve to their target/classes
mvn -B -q -ntp -pl receiver -am -DskipTests test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$PWD/receiver/target/test-classpath.txt" >/dev/null
cp=$(cat receiver/target/test-classpath.txt)
otel=$(sed -n 's|.*<opentelemetry.version>\(.*\)</opentelemetry.version>.*|\1|p' pom.xml | head -1)
mvn -B -q -ntp -f scripts/okhttp-sender/pom.xml -Dopentelemetry.version="$otel" dependency:build-classpath \
  -Dmdep.outputFile="$PWD/receiver/target/okhttp-sender-classpath.txt" >/dev/null
exec java ${GOSPAN_BENCH_OPTS:-} -Dgospan.bench.okhttp.cp="$(cat receiver/target/okhttp-sender-classpath.txt)" -cp "receiver/target/test-classes:receiver/target/classes:$cp" io.gospan.receiver.bench.ExportFloorBenchmark "$@"
