#!/usr/bin/env bash
# Regenerates receiver/src/main/cds/gospan.classlist, the classes a real `gospan run` loads (the
# JDK's and the jar's, as -XX:DumpLoadedClassList writes them), from which the image's
# class-data-sharing archive is dumped (receiver/Dockerfile, scripts/cds-archive.sh). Run it when
# CdsClassListTest says the list is stale (a listed class renamed, moved or removed), when
# CdsClassListIT says one of gospan's classes a run loads is missing, and after a dependency upgrade
# (no test notices a library's class missing from the list). The run: this build's jar with the recommended JVM settings, tracing the example
# server while the example client makes every call type (CdsTraining). Usage: scripts/cds-classlist.sh   (root)
set -euo pipefail
cd "$(dirname "$0")/.."
cp=$(scripts/bench-classpath.sh)
out=$PWD/receiver/src/main/cds/gospan.classlist
tmp=$PWD/receiver/target/gospan.classlist
rm -f "$tmp"
java -cp "receiver/target/test-classes:receiver/target/classes:$cp" io.gospan.receiver.bench.CdsTraining "-XX:DumpLoadedClassList=$tmp"
test -s "$tmp"
{
  echo "# The classes a real \`gospan run\` loaded (scripts/cds-classlist.sh wrote this; do not edit): the"
  echo "# image's class-data-sharing archive holds them (receiver/Dockerfile). CdsClassListTest and CdsClassListIT notice a stale list."
  grep -v -e '^#' -e '/\$Proxy[0-9]' "$tmp" # proxies are generated, never found by name
} > "$out"
echo "cds-classlist.sh: $out: $(grep -vc '^[#@]' "$out") classes" >&2
