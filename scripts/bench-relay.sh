#!/usr/bin/env bash
# Relay cost benchmark: what gospan costs per unary call through a middle tier, the whole
# product (the gospan jar as `gospan run`, exporter none), with in-process propagation on.
#   greeter-client -> greeter-relay -> greeter-server  (the relay makes 2 upstream calls per call)
# Per round, alternating (the machine's drift cancels out in the per-round ratios; the two jars'
# order flips every round):
#   none      no gospan
#   baseline  the gospan jar of BASELINE_REV (built once into receiver/target, cached)
#   gospan    this tree's gospan jar
# and for each: the traced programs' CPU per client call (schedstat of server and relay,
# getrusage of the client as greeter-client reports it), the gospan JVM's own CPU per call,
# probe hits per call and BPF ns per hit
# (bpftool's run_cnt / run_time_ns of the programs that gospan process holds, found through
# /proc/<pid>/fdinfo prog_id; kernel.bpf_stats_enabled set here, restored after).
# Then, per jar, hits per call per side, tracing one binary at a time (discovery.instrument):
# the server (server side, 2 calls served per client call), the client (client side), the
# relay (1 call served + 2 calls made).
#
# Usage: [BASELINE_REV=<git rev>] scripts/bench-relay.sh [calls-per-round] [rounds] [calls-in-flight] [GOMAXPROCS]
#   (root; defaults 2000 5 1, GOMAXPROCS as Go sets it; GOMAXPROCS=1 keeps the Go scheduler's idle
#   spinning, most of the whole-process CPU noise, out of the measurement)
#   EXAMPLES_BUILD="--go 1.19.8 --grpc v1.40.0": the example programs built that way (examples/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
calls=${1:-2000}
rounds=${2:-5}
concurrency=${3:-1}
gomaxprocs=${4:-}
[ "$(id -u)" -eq 0 ] || { echo "bench-relay.sh: run as root (BPF)" >&2; exit 1; }

# shellcheck disable=SC2086 # the build's flags, split
bin=$(examples/build.sh ${EXAMPLES_BUILD:-} | tail -n 1)
case "$bin" in /*) ;; *) bin=$root/examples/$bin ;; esac
jar=receiver/target/gospan.jar
if [ ! -f "$jar" ] || [ -n "$(find bpf receiver/src/main offsets/src/main -newer "$jar" -type f -print -quit)" ]; then
  echo "bench-relay.sh: building gospan (mvn package)..." >&2
  mvn -B -q -ntp -o -pl receiver -am -DskipTests package >&2
fi
jars=(gospan "$root/$jar")
if [ -n "${BASELINE_REV:-}" ]; then
  rev=$(git rev-parse --short "$BASELINE_REV")
  base_jar=$root/receiver/target/bench-baseline-$rev.jar
  if [ ! -f "$base_jar" ]; then
    echo "bench-relay.sh: building the gospan jar of $rev (mvn package in a git archive of it)..." >&2
    src=$(mktemp -d)
    git archive "$rev" | tar -x -C "$src"
    (cd "$src" && mvn -B -q -ntp -o -pl receiver -am -DskipTests package) >&2
    cp "$src/receiver/target/gospan.jar" "$base_jar"
    rm -rf "$src"
  fi
  jars=(baseline "$base_jar" "${jars[@]}")
fi

work=$(mktemp -d)
pids=()
stats_before=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup() {
  for ((i=${#pids[@]}-1; i>=0; i--)); do kill -TERM "${pids[$i]}" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  echo "$stats_before" > /proc/sys/kernel/bpf_stats_enabled
  rm -rf "$work"
}
trap cleanup EXIT
echo 1 > /proc/sys/kernel/bpf_stats_enabled

goenv=()
[ -n "$gomaxprocs" ] && goenv=(env "GOMAXPROCS=$gomaxprocs")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
relay_port=$(free_port)
${goenv[@]+"${goenv[@]}"} "$bin/greeter-server" -addr "127.0.0.1:$port" >/dev/null 2>&1 &
server=$!
pids+=("$server")
${goenv[@]+"${goenv[@]}"} "$bin/greeter-relay" -addr "127.0.0.1:$relay_port" -upstream "127.0.0.1:$port" -background 0 >/dev/null 2>&1 &
relay=$!
pids+=("$relay")
sleep 1

client() { ${goenv[@]+"${goenv[@]}"} "$bin/greeter-client" -addr "127.0.0.1:$relay_port" -rpc unary -quiet "$@"; }

# CPU ns of every thread of a process (schedstat, first field; %.0f: mawk's %d stops at 2^31)
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }

# {"cnt": run_cnt, "ns": run_time_ns, "per": {name: [cnt, ns]}} of the uprobe programs process $1 holds
prog_stats() {
  python3 - "$1" <<'EOF'
import json, os, subprocess, sys
pid = sys.argv[1]
ids = set()
for fd in os.listdir(f"/proc/{pid}/fdinfo"):
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}") as f:
            for line in f:
                if line.startswith("prog_id:"):
                    ids.add(int(line.split()[1]))
    except OSError:
        pass
per = {}
for p in json.loads(subprocess.check_output(["bpftool", "-j", "prog", "show"])):
    if p["id"] in ids and p["name"].startswith("uprobe_"):
        c = per.setdefault(p["name"], [0, 0])
        c[0] += p.get("run_cnt", 0)
        c[1] += p.get("run_time_ns", 0)
print(json.dumps({"cnt": sum(v[0] for v in per.values()), "ns": sum(v[1] for v in per.values()), "per": per}))
EOF
}

# start_gospan JAR PROGRAM-GLOB: starts `gospan run` tracing the programs of $bin the glob
# selects (exe_path: never another clone's example programs running on the machine), waits
# until it traces the long-lived ones; sets $gospan
start_gospan() {
  local cfg=$work/gospan.yaml log=$work/gospan.log
  printf 'discovery:\n  instrument:\n    - exe_path: "%s/%s"\nexporter:\n  type: none\nmetrics:\n  enabled: false\ntelemetry:\n  http:\n    enabled: false\n' "$bin" "$2" > "$cfg"
  java -jar "$1" run --config "$cfg" > "$log" 2>&1 &
  gospan=$!
  pids+=("$gospan")
  local want=()
  # shellcheck disable=SC2053
  [[ greeter-server == $2 ]] && want+=("$server")
  # shellcheck disable=SC2053
  [[ greeter-relay == $2 ]] && want+=("$relay")
  for _ in $(seq 1 300); do
    local ok=1
    grep -q "waiting for Go gRPC processes" "$log" || ok=0
    for p in ${want[@]+"${want[@]}"}; do grep -q "tracing pid $p " "$log" || ok=0; done
    [ "$ok" -eq 1 ] && return 0
    kill -0 "$gospan" 2>/dev/null || { cat "$log" >&2; echo "bench-relay.sh: gospan exited" >&2; exit 1; }
    sleep 0.2
  done
  cat "$log" >&2
  echo "bench-relay.sh: gospan did not trace the processes in 60 s" >&2
  exit 1
}
stop_gospan() {
  kill -TERM "$gospan"
  wait "$gospan" || true
  unset 'pids[${#pids[@]}-1]'
}

# warm_up MODE [untraced]: a client calling until gospan traces it (its binary then lingers:
# the next client process is traced from its first call); with no gospan or when gospan does
# not trace the client, 40 calls
warm_up() {
  if [ "$1" = none ] || [ -n "${2:-}" ]; then
    client -n 40 -rate 20 >/dev/null
    return
  fi
  # not through client(): $! of a backgrounded function is a subshell's pid
  ${goenv[@]+"${goenv[@]}"} "$bin/greeter-client" -addr "127.0.0.1:$relay_port" -rpc unary -quiet -n 0 -rate 20 >/dev/null 2>&1 &
  local w=$! i
  for i in $(seq 1 300); do
    grep -q "tracing pid $w " "$work/gospan.log" && break
    sleep 0.1
  done
  grep -q "tracing pid $w " "$work/gospan.log" || { echo "bench-relay.sh: gospan did not trace the client in 30 s" >&2; exit 1; }
  sleep 0.3
  kill -TERM "$w"
  wait "$w" 2>/dev/null || true
}

# measure MODE ROUND: one measured client run; appends a JSON line to $work/results
measure() {
  local mode=$1 round=$2 before after s0 r0 s1 r1 g0=0 g1=0 out
  warm_up "$mode"
  before='{"cnt":0,"ns":0,"per":{}}'
  [ "$mode" != none ] && before=$(prog_stats "$gospan") && g0=$(cpu_ns "$gospan")
  s0=$(cpu_ns "$server"); r0=$(cpu_ns "$relay")
  out=$(client -n "$calls" -concurrency "$concurrency" | tail -n 1)
  s1=$(cpu_ns "$server"); r1=$(cpu_ns "$relay")
  after='{"cnt":0,"ns":0,"per":{}}'
  [ "$mode" != none ] && g1=$(cpu_ns "$gospan") && after=$(prog_stats "$gospan")
  printf '{"mode":"%s","round":%d,"calls":%d,"server_ns":%d,"relay_ns":%d,"gospan_ns":%d,"client":%s,"before":%s,"after":%s}\n' \
    "$mode" "$round" "$calls" $((s1 - s0)) $((r1 - r0)) $((g1 - g0)) "$out" "$before" "$after" >> "$work/results"
}

names=none
for ((j = 0; j < ${#jars[@]}; j += 2)); do names+=" ${jars[$j]}"; done
echo "bench-relay.sh: $rounds rounds of $calls unary calls through the relay; modes: $names" >&2
client -n 500 >/dev/null # warm-up of the three processes
for ((round = 0; round < rounds; round++)); do
  measure none "$round"
  # baseline then gospan on even rounds, gospan then baseline on odd ones: a drift within a
  # round does not always favour the same jar
  order=$(seq 0 2 $((${#jars[@]} - 2)))
  [ $((round % 2)) -eq 1 ] && order=$(seq $((${#jars[@]} - 2)) -2 0)
  for j in $order; do
    start_gospan "${jars[$((j + 1))]}" "greeter-*"
    measure "${jars[$j]}" "$round"
    stop_gospan
  done
  echo "bench-relay.sh: round $((round + 1))/$rounds done" >&2
done
# hits per call per side: one binary traced at a time
side_calls=$((calls / 4 > 200 ? calls / 4 : 200))
for ((j = 0; j < ${#jars[@]}; j += 2)); do
  for b in server client relay; do
    start_gospan "${jars[$((j + 1))]}" "greeter-$b"
    if [ "$b" = client ]; then warm_up "${jars[$j]}"; else warm_up "${jars[$j]}" untraced; fi
    before=$(prog_stats "$gospan")
    client -n "$side_calls" -concurrency "$concurrency" >/dev/null
    after=$(prog_stats "$gospan")
    printf '{"side":"%s","mode":"%s","calls":%d,"before":%s,"after":%s}\n' \
      "$b" "${jars[$j]}" "$side_calls" "$before" "$after" >> "$work/sides"
    stop_gospan
  done
done

python3 - "$work/results" "$work/sides" "${BASELINE_REV:-}" "$calls" "$rounds" "${gomaxprocs:-default}" "$concurrency" <<'EOF'
import json, statistics, sys
results = [json.loads(l) for l in open(sys.argv[1])]
sides = [json.loads(l) for l in open(sys.argv[2])]
rev, calls, rounds, gmp, conc = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7]
modes = [m for m in ("none", "baseline", "gospan") if any(r["mode"] == m for r in results)]
med = statistics.median
def delta(r):
    return r["after"]["cnt"] - r["before"]["cnt"], r["after"]["ns"] - r["before"]["ns"]
def cpu(r):
    c = r["client"]
    client_ns = (c["cpu_user_ms"] + c["cpu_sys_ms"]) * 1e6
    return {"server": r["server_ns"] / r["calls"], "relay": r["relay_ns"] / r["calls"],
            "client": client_ns / r["calls"], "all": (r["server_ns"] + r["relay_ns"] + client_ns) / r["calls"]}
by = {(r["mode"], r["round"]): r for r in results}
print(f"relay benchmark: {calls} unary calls per round through greeter-relay (2 upstream calls each), {conc} in flight,"
      f" {rounds} rounds, GOMAXPROCS {gmp}; baseline {rev or '(none)'}")
for m in modes[1:]:
    hits = [delta(by[(m, i)])[0] / calls for i in range(rounds)]
    nsph = [delta(by[(m, i)])[1] / max(1, delta(by[(m, i)])[0]) for i in range(rounds)]
    print(f"{m:9s} probe hits per client call (client + relay + server): {med(hits):.2f}; BPF ns per hit (median of rounds):"
          f" {med(nsph):.0f}")
    per = {}
    for i in range(rounds):
        r = by[(m, i)]
        for name, (c, ns) in r["after"]["per"].items():
            b = r["before"]["per"].get(name, [0, 0])
            per.setdefault(name, []).append((c - b[0], ns - b[1]))
    for name, v in sorted(per.items()):
        c = sum(x[0] for x in v); ns = sum(x[1] for x in v)
        print(f"            {name:45s} {c / calls / rounds:6.2f} hits/call {ns / max(1, c):6.0f} ns/hit")
print("traced programs' CPU per client call, us (median of rounds): " + "; ".join(
    f"{m}: server {med([cpu(by[(m, i)])['server'] for i in range(rounds)]) / 1e3:.1f}"
    f" relay {med([cpu(by[(m, i)])['relay'] for i in range(rounds)]) / 1e3:.1f}"
    f" client {med([cpu(by[(m, i)])['client'] for i in range(rounds)]) / 1e3:.1f}"
    f" all {med([cpu(by[(m, i)])['all'] for i in range(rounds)]) / 1e3:.1f}" for m in modes))
for part in ("relay", "all"):
    added = {m: [cpu(by[(m, i)])[part] - cpu(by[("none", i)])[part] for i in range(rounds)] for m in modes[1:]}
    print(f"added CPU per client call, {part}, per round (us): " + "; ".join(
        f"{m} {[round(x / 1e3, 1) for x in added[m]]} median {med(added[m]) / 1e3:.1f}" for m in modes[1:]))
    if "baseline" in added:
        ratios = [g / b if b else float("nan") for g, b in zip(added["gospan"], added["baseline"])]
        print(f"  gospan / baseline, {part}, per round: {[round(x, 2) for x in ratios]} median {med(ratios):.2f}")
if "baseline" in modes:
    nsr = [(delta(by[("gospan", i)])[1] / delta(by[("gospan", i)])[0]) / (delta(by[("baseline", i)])[1] / delta(by[("baseline", i)])[0])
           for i in range(rounds)]
    print(f"BPF ns per hit, gospan / baseline per round: {[round(x, 3) for x in nsr]} median {med(nsr):.3f}")
print("gospan's own CPU per client call (the sidecar JVM, sharing the cores), us (median of rounds): " + ", ".join(
    f"{m} {med([by[(m, i)]['gospan_ns'] / calls for i in range(rounds)]) / 1e3:.1f}" for m in modes[1:]))
p50 = {m: med([by[(m, i)]["client"]["p50_us"] for i in range(rounds)]) for m in modes}
print("client p50 latency per call (us): " + ", ".join(f"{m} {v:.0f}" for m, v in p50.items()))
print("probe hits per unary call, per side (one binary traced at a time):")
for s in sides:
    c = s["after"]["cnt"] - s["before"]["cnt"]
    ns = s["after"]["ns"] - s["before"]["ns"]
    per_call = c / s["calls"]
    what = {"server": "server side (per call served; 2 per client call)", "client": "client side (per call made)",
            "relay": "relay (1 call served + 2 made)"}[s["side"]]
    if s["side"] == "server":
        per_call /= 2
    print(f"  {s['mode']:9s} {what:50s} {per_call:6.2f} hits, {ns / max(1, c):5.0f} ns/hit")
EOF
