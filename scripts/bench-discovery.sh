#!/usr/bin/env bash
# Discovery benchmark: exec -> probes attached for new binaries (median of 20), and the CPU of
# an idle gospan with 200 unrelated processes. Usage: scripts/bench-discovery.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/.."
cp=$(scripts/bench-classpath.sh)
exec java -cp "receiver/target/test-classes:receiver/target/classes:$cp" io.gospan.receiver.bench.DiscoveryBenchmark "$@"
