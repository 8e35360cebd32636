#!/usr/bin/env bash
# Inspection benchmark: answers every probe question for each binary in a fresh JVM capped at 64 MB heap,
# printing wall time and peak heap. Builds the module's classes first if needed.
#   offsets/bench.sh BINARY...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -d "$here/target/test-classes/io/gospan/offsets" ]; then
  (cd "$here/.." && mvn -B -q -pl offsets test-compile) >&2
fi
for bin in "$@"; do
  java -Xmx64m -XX:+UseSerialGC -cp "$here/target/classes:$here/target/test-classes" \
    io.gospan.offsets.InspectBenchmark "$bin"
done
