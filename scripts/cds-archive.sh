#!/usr/bin/env bash
# Dumps a class-data-sharing (CDS) archive for `java -jar JAR`: the classes a real `gospan run`
# loaded (receiver/src/main/cds/gospan.classlist, scripts/cds-classlist.sh regenerates it),
# parsed and laid out once, mapped read-only by every gospan started with
# -XX:SharedArchiveFile=ARCHIVE -jar JAR (JAR by the same absolute path). A class the list names
# but the jar no longer holds is skipped with a warning; a class the list lacks loads as without
# the archive. -XX:+UseSerialGC as the sidecar runs: no archived heap objects, which only G1 maps.
# Usage: scripts/cds-archive.sh JAR ARCHIVE [CLASSLIST]   (java 17: JAVA env or PATH)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jar=$(realpath "$1")
archive=$2
list=${3:-$root/receiver/src/main/cds/gospan.classlist}
"${JAVA:-java}" -XX:+UseSerialGC -Xshare:dump -XX:SharedClassListFile="$list" -XX:SharedArchiveFile="$archive" -cp "$jar" \
  > "$archive.log" 2>&1 || { cat "$archive.log" >&2; exit 1; }
echo "cds-archive.sh: $archive ($(du -m "$archive" | cut -f1) MB; $(grep -c 'Preload Warning' "$archive.log" || true) classes of the list not found; log $archive.log)" >&2
