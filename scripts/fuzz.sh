#!/usr/bin/env bash
# Coverage-guided fuzzing of the binary readers (offsets module, GoBinaryFuzzTest, Jazzer): each target
# in turn, for a bounded time, in its own JVM with a 1 GiB heap.
#
#   scripts/fuzz.sh [DURATION] [TARGET...]
#
# DURATION as Jazzer reads it (30s, 5m, 1h; default 30s) per target; TARGETs among rawImage, buildInfo,
# pclntab, runtimeTypes, dwarf (default: all). A finding (an exception other than the readers' typed
# ones, an input over 10 s or over its allocation budget) stops that target and fails the run; Jazzer
# keeps the input in offsets/src/test/resources/io/gospan/offsets/fuzz/GoBinaryFuzzTestInputs/<target>/
# (commit it with the fix: `mvn test` then replays it in every build). Inputs that found new coverage
# accumulate in offsets/.cifuzz-corpus/ (not committed). FUZZ_NICE=19 runs the JVMs niced.
# Run from a built tree (scripts/test.sh runs it after the tests); offline (-o): the build has
# fetched every dependency.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-30s}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(rawImage buildInfo pclntab runtimeTypes dwarf)
fi
failed=()
for t in "${targets[@]}"; do
  echo "== fuzzing GoBinaryFuzzTest#$t for $duration"
  # -am: the offsets module's build tool (bpf/gen) comes from this reactor, not ~/.m2 (CI does
  # not install); compiling is up to date after the build, only the fuzz test runs.
  if ! JAZZER_FUZZ=1 nice -n "${FUZZ_NICE:-0}" mvn -B -ntp -q -o -pl offsets -am test \
      -Dtest="GoBinaryFuzzTest#$t" -Djazzer.max_duration="$duration" -DargLine=-Xmx1g \
      -Dsurefire.failIfNoSpecifiedTests=false; then
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found something in: ${failed[*]} (inputs under offsets/src/test/resources/io/gospan/offsets/fuzz/GoBinaryFuzzTestInputs/)" >&2
  exit 1
fi
echo "fuzzing: no finding in ${targets[*]} (${duration} each)"
