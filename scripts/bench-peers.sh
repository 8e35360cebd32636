#!/usr/bin/env bash
# gospan side by side with a peer: OpenTelemetry eBPF Instrumentation (OBI), built here from source
# at a pinned release, on the load benchmark's workloads (the example greeter). Without a tracer,
# with empty uprobes at gospan's attach points (the floor), with gospan and with OBI, alternating,
# several rounds; each tracer exports OTLP/gRPC to the benchmark's receiver, which only counts.
# Prints, per tracer, LoadBenchmark's table (calls/s and target CPU per call against "without",
# the tracer's CPU per span, its RSS, spans not received). Usage: scripts/bench-peers.sh [rounds]
# (scripts/bench-peers.sh --build-only: build OBI, measure nothing)
# (root; several minutes the first time: OBI's eBPF objects and binary are built and cached in
# $GOSPAN_OBI_DIR, default /var/tmp/gospan-obi). Never part of CI.
# -Dgospan.bench.workloads in GOSPAN_BENCH_OPTS as for bench-load.sh; default "unary, 1 caller;unary, 16".
#
# How OBI is built (docs/benchmarks.md, "Side by side with OBI"):
# - its source from the Go module proxy, checked against the h1 hash below (sum.golang.org does not
#   answer here, so the go command's own check is off for this one module);
# - its eBPF objects, which the module does not ship, generated with bpf2go (cilium/ebpf, the version
#   OBI's go.mod names) and clang-19, Debian 12's newest (OBI's own generator image uses LLVM 20);
# - one patch, scripts/peers/obi-poll-proc.patch: OBI's process watcher needs a kprobe (sys_bind) and
#   stops discovery when it cannot attach one; on a kernel without kprobes it now polls /proc instead.
# If any step fails, the script says which and exits 0 without measuring: OBI is not gospan's to fix.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

OBI_VERSION=v0.8.0
OBI_H1=h1:0MnX++31A13IoLk4pOcNMVHz0Ba5m1gG/6v9WbDk2DE=
dir=${GOSPAN_OBI_DIR:-/var/tmp/gospan-obi}
obi=$dir/$OBI_VERSION/obi

skip() {
  echo "bench-peers: OBI $OBI_VERSION skipped: $*" >&2
  echo "bench-peers: nothing measured (gospan alone: scripts/bench-load.sh)" >&2
  exit 0
}

build_obi() {
  mkdir -p "$dir"
  local log=$dir/build-$OBI_VERSION.log
  : > "$log"
  echo "bench-peers: building OBI $OBI_VERSION in $dir (log: $log)"
  if ! command -v clang-19 >/dev/null || ! command -v llvm-strip-19 >/dev/null; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-19 llvm-19; } >> "$log" 2>&1 \
      || skip "apt-get install clang-19 llvm-19 failed (see $log)"
  fi
  local info
  info=$(GOFLAGS=-mod=mod GONOSUMDB=go.opentelemetry.io/obi GOSUMDB=off \
    go mod download -json "go.opentelemetry.io/obi@$OBI_VERSION" 2>> "$log") || skip "go mod download go.opentelemetry.io/obi@$OBI_VERSION failed (see $log)"
  local sum src
  sum=$(printf '%s' "$info" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("Sum",""))')
  src=$(printf '%s' "$info" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("Dir",""))')
  [ "$sum" = "$OBI_H1" ] || skip "the module proxy's go.opentelemetry.io/obi@$OBI_VERSION has hash '$sum', not $OBI_H1"
  local ebpf_version
  ebpf_version=$(awk '$1 == "github.com/cilium/ebpf" {print $2}' "$src/go.mod")
  GOBIN=$dir/bin go install "github.com/cilium/ebpf/cmd/bpf2go@$ebpf_version" >> "$log" 2>&1 \
    || skip "go install bpf2go@$ebpf_version failed (see $log)"
  local work=$dir/$OBI_VERSION/src
  rm -rf "$work"
  mkdir -p "$(dirname "$work")"
  cp -r "$src" "$work"
  chmod -R u+w "$work"
  (cd "$work" && patch -p1 < "$root/scripts/peers/obi-poll-proc.patch") >> "$log" 2>&1 || skip "the /proc polling patch does not apply (see $log)"
  # OBI's Makefile: CFLAGS, BPF_CLANG, BPF2GO for its go:generate lines (all of them bpf2go)
  (cd "$work" && BPF2GO=$dir/bin/bpf2go BPF_CLANG=clang-19 \
    BPF_CFLAGS="-std=gnu17 -O2 -g -Wunaligned-access -Wpacked -Wpadded -Wall -Werror" \
    PATH=/usr/lib/llvm-19/bin:$PATH go generate ./...) >> "$log" 2>&1 || skip "generating OBI's eBPF objects failed (see $log)"
  (cd "$work" && CGO_ENABLED=0 go build -o "$obi.tmp" ./cmd/obi) >> "$log" 2>&1 || skip "go build ./cmd/obi failed (see $log)"
  mv "$obi.tmp" "$obi"
}

[ -x "$obi" ] || build_obi
if [ "${1:-}" = --build-only ]; then
  echo "bench-peers: OBI $OBI_VERSION is $obi"
  exit 0
fi

cp=$(scripts/bench-classpath.sh)
exec java "-Dgospan.bench.peers=obi=$obi" "-Dgospan.bench.workloads=unary, 1 caller;unary, 16" ${GOSPAN_BENCH_OPTS:-} \
  -cp "receiver/target/test-classes:receiver/target/classes:$cp" io.gospan.receiver.bench.LoadBenchmark "$@"
