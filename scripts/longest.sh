#!/usr/bin/env bash
# Where the weight of the Java code is: the N longest main source files and methods (default 10),
# parsed with the JDK's compiler API (scripts/Longest.java). docs/architecture.md quotes it.
set -euo pipefail
cd "$(dirname "$0")/.."
exec java scripts/Longest.java "${1:-10}" .
