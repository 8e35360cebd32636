#!/usr/bin/env bash
# What a uprobe hit costs the traced thread, by the kind of instruction it sits on: the kernel
# emulates a relative jump or call and a push (Linux arch/x86/kernel/uprobes.c,
# branch_setup_xol_ops, push_setup_xol_ops) and executes any other instruction out of line,
# single-stepping it (a second trap). trapbench's main.Probed is called in a loop with a probe on
# each of its instructions in turn (a tracefs uprobe event: the same handler for every place, so
# only the instruction's kind differs), alternating with no probe, for several rounds.
# Prints, per instruction, the CPU ns per call added over no probe (median of rounds).
#
# Usage: scripts/bench-trap-kinds.sh [calls-per-run] [rounds]   (root; defaults 300000 5)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-300000}
rounds=${2:-5}
tracefs=/sys/kernel/tracing
[ -w "$tracefs/uprobe_events" ] || { echo "bench-trap-kinds: $tracefs/uprobe_events is not writable (root, tracefs mounted?)" >&2; exit 1; }
for tool in go objdump python3; do
  command -v "$tool" >/dev/null || { echo "bench-trap-kinds: $tool is needed (scripts/install-deps.sh)" >&2; exit 1; }
done
work=$(mktemp -d)
event=gospan_trap_kinds
cleanup() {
  { echo 0 >"$tracefs/events/uprobes/$event/enable"; } 2>/dev/null || true
  { echo "-:uprobes/$event" >>"$tracefs/uprobe_events"; } 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
(cd examples && GOTOOLCHAIN=${GOTOOLCHAIN:-auto} go build -o "$work/trapbench" ./cmd/trapbench)
bin=$work/trapbench
# main.Probed's instructions: address, then the instruction text
objdump -d --no-show-raw-insn -M intel "$bin" | awk '/<main.Probed>:/{on=1; next} on && /^$/{on=0} on' \
  | sed -E 's/^ *([0-9a-f]+):\s+/\1\t/' | grep -v $'\tint3' >"$work/ins"
# the file offset of a virtual address: the executable PT_LOAD's p_offset - p_vaddr
read -r off vaddr < <(readelf -lW "$bin" | awk '$1=="LOAD" && / R E / && !done {print $2, $3; done=1}')
run() { "$bin" -n "$calls" | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu_ns_per_call"])'; }
declare -A added
while IFS=$'\t' read -r addr text; do
  file=$(printf '0x%x' $((0x$addr - vaddr + off)))
  for ((r = 0; r < rounds; r++)); do
    base=$(run)
    echo "p:uprobes/$event $bin:$file" >>"$tracefs/uprobe_events"
    echo 1 >"$tracefs/events/uprobes/$event/enable"
    probed=$(run)
    echo 0 >"$tracefs/events/uprobes/$event/enable"
    echo "-:uprobes/$event" >>"$tracefs/uprobe_events"
    added[$addr]+="$(python3 -c "print($probed - $base)") "
  done
  echo >"$tracefs/trace"
done <"$work/ins"
printf '%-8s %-40s %12s  %s\n' address instruction "ns added" "per round"
while IFS=$'\t' read -r addr text; do
  median=$(python3 -c "import statistics,sys; print(round(statistics.median(float(x) for x in sys.argv[1:])))" ${added[$addr]})
  printf '%-8s %-40s %12s  %s\n' "$addr" "$text" "$median" "$(python3 -c "import sys; print(' '.join(str(round(float(x))) for x in sys.argv[1:]))" ${added[$addr]})"
done <"$work/ins"
echo "SUMMARY: CPU ns added per hit by instruction kind (tracefs uprobe event; $rounds rounds of $calls calls)"
