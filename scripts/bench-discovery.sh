#!/usr/bin/env bash
# Discovery benchmark: exec -> probes attached for new binaries (median of 20), and the CPU of
# an idle gospan with 200 unrelated processes. Usage: scripts/bench-discovery.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/.."
examples/build.sh >/dev/null
mvn -B -q -ntp -DskipTests package
# in one reactor run, so gospan's own modules resolve to their target/classes, not to whatever
# snapshot ~/.m2 holds (none on a new machine)
mvn -B -q -ntp -pl receiver -am -DskipTests test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$PWD/receiver/target/test-classpath.txt" >/dev/null
cp=$(cat receiver/target/test-classpath.txt)
exec java -cp "receiver/target/test-classes:receiver/target/classes:$cp" io.gospan.receiver.bench.DiscoveryBenchmark "$@"
