#!/usr/bin/env bash
# Regenerates the embedded offsets catalog (src/main/resources/io/gospan/offsets/catalog.json)
# and docs/compatibility.md. Not part of the normal build: run it by hand when a grpc-go, x/net or
# Go release comes out, review the diff, commit it.
#
#   generate-catalog.sh [--build-only] [--merge-only] [--until HH:MM] [--only GRPC@GO]...
#
# For every combination of the matrix (the latest patch of every grpc-go minor from v1.30, each
# with the Go toolchains that can build it: go1.16.15 for grpc-go <= v1.40 (stack ABI), go1.21.13
# where grpc-go's go line allows, the go on PATH) it builds src/catalog-gen/probe with
# src/catalog-gen/build-one.sh, reads the binary's DWARF with OffsetsResolver (the project's own
# inspector) and stores every ProbeField value in the cache, CACHE/<grpc>-go<go>.json (or the
# reason it failed). Then it merges all cached results into the catalog. Order: every grpc-go minor
# with one toolchain first, then the remaining toolchains, then the first release (X.Y.0) of every
# minor whose latest patch is not X.Y.0, then extra evidence (go1.16.15 for every later grpc-go it
# can build, go1.17.13 and go1.19.13 on a few, the last patch of every later Go minor with the newest
# grpc-go its go line allows: Go's own layouts are keyed by Go's version); one build at a time, nice -n 19.
#
# Incremental: a combination with a cached result (success or failure) of the current probe program
# (the JSON's probe_source: a hash of src/catalog-gen/probe/main.go) is not rebuilt; delete its JSON
# to retry. A changed probe program (new types or functions to observe) rebuilds every combination.
# CACHE is $GOSPAN_CATALOG_CACHE, default offsets/target/catalog-cache.
#   --build-only   build and extract, do not merge
#   --merge-only   only merge the cache into the catalog and docs/compatibility.md
#   --until HH:MM  (UTC) start no new build after that time, then merge what there is
#   --list         print the matrix ("grpc go [pin]" lines, in build order) and exit
#   --only G@GO    only this combination (repeatable), e.g. --only v1.60.1@1.21.13
#   --verify-stripped  after the merge, link every observed combination again with -s -w (build-one.sh,
#                  GOSPAN_STRIPPED=1) and resolve it through the new catalog: every field must equal
#                  its unstripped twin's DWARF (CatalogGenerator verify-stripped); then again through the
#                  catalog without that grpc-go release and later ones (as if it were newer than the
#                  catalog): every field must still equal DWARF, now from the binary's own runtime type
#                  information and code, but the arguments of a function whose parameters changed in that
#                  release, which are refused ("refused" lines); prints each disagreement ("WRONG") and
#                  exits 1 if there is one (CI checks a sample: CatalogPatchReleasesIT)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cache=${GOSPAN_CATALOG_CACHE:-$here/target/catalog-cache}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
build_only=0; merge_only=0; list=0; until=""; only=(); verify=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-only) build_only=1; shift ;;
    --merge-only) merge_only=1; shift ;;
    --until) until=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --list) list=1; shift ;;
    --verify-stripped) verify=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "generate-catalog.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
note() { echo "generate-catalog.sh: $(date -u +%H:%M:%S) $*" >&2; }

# The inspector's classes and Jackson: compiled by Maven (offline), classpath cached.
java_cp() {
  if [[ ! -f "$here/target/classes/io/gospan/offsets/catalog/CatalogGenerator.class" || ! -f "$cache/.classpath" ]]; then
    (cd "$root" && mvn -B -q -o -pl offsets compile dependency:build-classpath -Dmdep.outputFile="$cache/.classpath") >&2
  fi
  echo "$here/target/classes:$(cat "$cache/.classpath")"
}
generator() { java -cp "$(java_cp)" io.gospan.offsets.catalog.CatalogGenerator "$@"; }

PATH_GO=$(GOTOOLCHAIN=local go env GOVERSION); PATH_GO=${PATH_GO#go}
# the probe program's version: cached results of another are stale (build-one.sh hashes it the same way)
source=$(sha256sum "$here/src/catalog-gen/probe/main.go" | cut -c1-16)
# grpc-go releases the module proxy serves but omits from its version list (`go list -m -versions`
# does not show them; `go list -m google.golang.org/grpc@v1.34.2` resolves): v1.34.1 and v1.34.2
# lie between v1.34.0 and v1.35.0, whose http2_client_conn differ, so without them no v1.34 patch
# release is covered. They join the list above like any listed release.
UNLISTED="v1.33.3 v1.34.1 v1.34.2"
OLD_GO=1.16.15
MID_GO=1.21.13
# Go minors observed on top (Go's own layouts: netFD, net/http's HTTP/2 server, runtime.g): the last patch of each.
GO_MINORS="1.18.10 1.20.14 1.22.12 1.23.12 1.24.13 1.25.14 1.26.11 1.27.4"

# "grpc go [pin]" lines in build order.
matrix() {
  local versions v minor goline
  versions=$(cd /tmp && { GOFLAGS=-mod=mod GOTOOLCHAIN=local go list -m -versions google.golang.org/grpc | tr ' ' '\n';
      printf '%s\n' $UNLISTED; } | grep -E '^v1\.[0-9]+\.[0-9]+$' | sort -t. -k2,2n -k3,3n -u |
    awk -F. '$2 >= 30 {k=$2; last[k]=$0; if (!(k in seen)) {seen[k]=1; order[++n]=k}}
      END {for (i = 1; i <= n; i++) print last[order[i]]}')
  local first=() second=() third=() fourth=() tc
  local -A golines=()
  for v in $versions; do
    minor=$(cut -d. -f2 <<<"$v")
    goline=$(cd /tmp && GOFLAGS=-mod=mod GOTOOLCHAIN=local go list -m -json "google.golang.org/grpc@$v" |
      sed -n 's/.*"GoVersion": "\(1\.[0-9]*\).*/\1/p'); goline=${goline:-1.11}
    golines[$v]=$(cut -d. -f2 <<<"$goline")
    if [[ "$minor" -le 40 ]]; then
      tc=$OLD_GO; second+=("$v $MID_GO" "$v $PATH_GO")
    elif [[ $(cut -d. -f2 <<<"$goline") -le 21 ]]; then
      tc=$MID_GO; second+=("$v $PATH_GO")
    else
      tc=$PATH_GO
    fi
    first+=("$v $tc")
    # The minor's first release too: grpc-go has changed internals in patch releases (1.82.1), and
    # the catalog only vouches for versions between two observations that agree.
    [[ "$v" == *.0 ]] || third+=("${v%.*}.0 $tc")
    # ... and with the register ABI too, so that every catalogued release has a register-ABI build
    # (--verify-stripped reads each one's arguments from its own code)
    [[ "$v" == *.0 || "$tc" != "$OLD_GO" ]] || third+=("${v%.*}.0 $MID_GO")
    # More evidence: the stack ABI for every grpc-go go1.16 can still build (go line <= 1.16), and
    # the oldest register-ABI toolchains (Go 1.17's DWARF differs at entry) on a few releases.
    if [[ "$minor" -gt 40 && $(cut -d. -f2 <<<"$goline") -le 16 ]]; then
      fourth+=("$v $OLD_GO")
    fi
    case "$v" in
      v1.40.*|v1.57.*) fourth+=("$v 1.17.13") ;;
      v1.63.*) fourth+=("$v 1.19.13") ;;
    esac
  done
  # Every Go minor of the register ABI, each with the newest grpc-go its go line allows: Go's own
  # layouts (net's netFD, net/http's HTTP/2 server, runtime.g) are keyed by Go's version and vouched for
  # only between two observations that agree.
  local g gm best
  for g in $GO_MINORS; do
    gm=$(cut -d. -f2 <<<"$g"); best=""
    for v in $versions; do [[ ${golines[$v]} -le $gm ]] && best=$v; done
    [[ -n "$best" ]] && fourth+=("$best $g")
  done
  local newest=${v}
  # The newest x/net with the newest grpc-go: applications upgrade x/net on their own.
  local xnet; xnet=$(cd /tmp && GOFLAGS=-mod=mod GOTOOLCHAIN=local go list -m -versions golang.org/x/net | tr ' ' '\n' | tail -1)
  printf '%s\n' "${first[@]}" "$newest $PATH_GO golang.org/x/net@$xnet" "${second[@]}" "${third[@]}" "${fourth[@]}"
}

if [[ "$list" -eq 1 ]]; then matrix; exit 0; fi
if [[ "$merge_only" -eq 0 ]]; then
  if [[ ${#only[@]} -gt 0 ]]; then
    lines=(); for o in "${only[@]}"; do lines+=("${o%@*} ${o#*@}"); done
  else
    mapfile -t lines < <(matrix)
  fi
  for line in "${lines[@]}"; do
    read -r grpc gov pin <<<"$line"
    key="$grpc-go$gov${pin:+-xnet${pin#*@}}"
    grep -qF "\"probe_source\" : \"$source\"" "$cache/$key.json" 2>/dev/null && continue
    if [[ -n "$until" && "$(date -u +%H:%M)" > "$until" ]]; then
      note "past $until: not building $key"; continue
    fi
    note "building $key"
    dir=$cache/build/$key
    if GOSPAN_PIN=${pin:-} nice -n 19 "$here/src/catalog-gen/build-one.sh" "$gov" "$grpc" "$dir" >/dev/null; then
      generator extract "$dir/probe" "$cache/$key.json" || note "extract failed for $key"
    else
      generator failed "$cache/$key.json" "$key" "$(tail -1 "$dir/build.log")"
      note "FAILED $key: $(tail -1 "$dir/build.log")"
    fi
    # which probe program the result is of (Jackson writes "{" alone on the first line)
    [[ -f "$cache/$key.json" ]] && sed -i "1a\\  \"probe_source\" : \"$source\"," "$cache/$key.json"
  done
fi
if [[ "$build_only" -eq 0 ]]; then
  generator merge "$cache" "$here/src/main/resources/io/gospan/offsets/catalog.json" "$root/docs/compatibility.md"
fi
if [[ "$verify" -eq 1 ]]; then
  bad=0; checked=0; refused=0
  if [[ ${#only[@]} -gt 0 ]]; then
    lines=(); for o in "${only[@]}"; do lines+=("${o%@*} ${o#*@}"); done
  else
    mapfile -t lines < <(matrix)
  fi
  for line in "${lines[@]}"; do
    read -r grpc gov pin <<<"$line"
    key="$grpc-go$gov${pin:+-xnet${pin#*@}}"
    grep -q '"status" : "ok"' "$cache/$key.json" 2>/dev/null || continue
    dir=$cache/build/$key
    if ! GOSPAN_STRIPPED=1 GOSPAN_PIN=${pin:-} nice -n 19 "$here/src/catalog-gen/build-one.sh" "$gov" "$grpc" "$dir" >/dev/null; then
      note "verify: cannot build the stripped twin of $key"; bad=1; continue
    fi
    checked=$((checked + 1))
    mkdir -p "$cache/verify"
    if ! out=$(generator verify-stripped "$dir/probe.stripped" "$cache/$key.json" "$here/src/main/resources/io/gospan/offsets/catalog.json" "$cache/verify/$key.json"); then
      bad=1; note "verify: $key stripped disagrees with its DWARF:"
    fi
    [[ -z "$out" ]] || echo "$out" | sed "s/^/  $key /" >&2
    refused=$((refused + $(grep -c '^refused' <<<"$out" || true)))
  done
  # docs/compatibility.md again, with what was found ("Every catalogued build without its release")
  generator merge "$cache" "$here/src/main/resources/io/gospan/offsets/catalog.json" "$root/docs/compatibility.md"
  note "verify: $checked stripped builds resolved through the catalog and, without their grpc-go release, through their own type information and code$([[ $bad -eq 0 ]] && echo ", all equal to their DWARF" || echo "; disagreements above"); $refused arguments refused (their function's parameters changed in that release)"
  exit "$bad"
fi
