#!/usr/bin/env bash
# Builds what the benchmarks run (the example programs, gospan's jar, the receiver's test classes)
# and prints the receiver's test class path, for the bench scripts: cp=$(scripts/bench-classpath.sh)
# then java -cp "receiver/target/test-classes:receiver/target/classes:$cp" ... from the repository
# root. Build output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
examples/build.sh >/dev/null
mvn -B -q -ntp -DskipTests package >&2
# in one reactor run, so gospan's own modules resolve to their target/classes, not to whatever
# snapshot ~/.m2 holds (none on a new machine)
mvn -B -q -ntp -pl receiver -am -DskipTests test-compile dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile="$PWD/receiver/target/test-classpath.txt" >&2
cat receiver/target/test-classpath.txt
