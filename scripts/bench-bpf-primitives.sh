#!/usr/bin/env bash
# What each BPF primitive gospan's probes are built of costs on this machine (bpf_probe_read_user,
# bpf_probe_read_kernel, map lookups, bpf_ktime_get_ns, bpf_get_attach_cookie), hot and cold.
# Usage: scripts/bench-bpf-primitives.sh [rounds]   (root; prints a table)
set -euo pipefail
cd "$(dirname "$0")/.."
# in one reactor run, so gospan's own modules resolve to their target/classes, not to whatever
# snapshot ~/.m2 holds (none on a new machine)
mvn -B -q -ntp -pl receiver -am -DskipTests test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$PWD/receiver/target/test-classpath.txt" >/dev/null
cp=$(cat receiver/target/test-classpath.txt)
exec java -cp "receiver/target/test-classes:receiver/target/classes:$cp" \
  io.gospan.receiver.bench.BpfPrimitivesBenchmark "$@"
