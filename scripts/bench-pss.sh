#!/usr/bin/env bash
# Memory a node pays for several sidecars: one `gospan run` alone, then N (default 4) at once from
# the same jar, each tracing only its own example server under a light steady load (200 calls/s),
# read after 60 s of load and again after 30 s idle: RSS, PSS, Private, Shared per sidecar and
# "PSS of each additional sidecar" = (PSS of all N - PSS of one alone)/(N-1); builds alternating
# over several rounds; one SUMMARY line per build and case. Usage: scripts/bench-pss.sh [rounds]   (root)
# GOSPAN_BENCH_CDS=1 also measures the jar with a class-data-sharing archive dumped from
# receiver/src/main/cds/gospan.classlist (scripts/cds-archive.sh) and mapped where it was dumped
# (-XX:ArchiveRelocationMode=0), as the image runs it, labelled "cds", against "plain".
# GOSPAN_BENCH_JARS=before=/path/a.jar,after=/path/b.jar measures several builds alternating;
# GOSPAN_BENCH_OPTS adds Java system properties without spaces: -Dgospan.bench.sidecars=4,
# -Dgospan.bench.pss.rate=200, -Dgospan.bench.pss.load=60, -Dgospan.bench.pss.idle=30 (s),
# -Dgospan.bench.jvm.add.LABEL=-XX:A,-XX:B (options added to a build's recommended ones).
set -euo pipefail
cd "$(dirname "$0")/.."
cp=$(scripts/bench-classpath.sh)
jars=${GOSPAN_BENCH_JARS:-}
cds=()
if [[ ${GOSPAN_BENCH_CDS:-0} == 1 ]]; then
  jar=$PWD/receiver/target/gospan.jar
  scripts/cds-archive.sh "$jar" receiver/target/gospan.jsa
  jars=${jars:+$jars,}plain=$jar,cds=$jar
  cds=(-Dgospan.bench.jvm.add.cds=-XX:+UnlockDiagnosticVMOptions,-XX:ArchiveRelocationMode=0,-XX:SharedArchiveFile=$PWD/receiver/target/gospan.jsa)
fi
exec java ${jars:+-Dgospan.bench.jars=$jars} "${cds[@]}" ${GOSPAN_BENCH_OPTS:-} -cp "receiver/target/test-classes:receiver/target/classes:$cp" io.gospan.receiver.bench.PssBenchmark "$@"
