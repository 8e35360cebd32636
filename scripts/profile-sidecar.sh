#!/usr/bin/env bash
# Profiles the sidecar (JFR, in the JDK) under the load benchmark's workloads: gospan.jar run with
# the recommended JVM settings, exporting over OTLP/gRPC to a receiver that only counts
# (CountingOtlpReceiver, its own JVM), tracing this clone's greeter server and client only.
# After a 20,000-call warm-up, per workload: a JFR recording (settings=profile) around the
# client's run, the sidecar's CPU per span from /proc (JFR's own cost included), and
# JfrSummary's report: CPU samples by thread, hottest methods, allocation per span by class and by
# allocating frame. Not part of CI.
#
# With ASYNC_PROFILER=<path to libasyncProfiler.so> (async-profiler, e.g. from the Maven Central
# artifact tools.profiler:async-profiler, linux-x64/ in the jar), async-profiler is loaded into the
# sidecar (jcmd JVMTI.agent_load) instead: CPU samples every 1 ms with native and kernel frames
# (the jnr-ffi upcalls, libbpf, epoll, the JIT and GC threads), summarized by
# scripts/collapsed-summary.py.
#
# Usage: scripts/profile-sidecar.sh [outdir]   (root; JAR=path profiles another gospan jar)
#   SKIP_BUILD=1 uses what is built.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
[ "$(id -u)" -eq 0 ] || { echo "profile-sidecar.sh: run as root (BPF)" >&2; exit 1; }
out=${1:-$(mktemp -d /tmp/gospan-profile.XXXXXX)}
mkdir -p "$out"
if [ -z "${SKIP_BUILD:-}" ]; then
  examples/build.sh >/dev/null
  mvn -B -q -ntp -DskipTests package
  mvn -B -q -ntp -pl receiver -am -DskipTests test-compile dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile="$PWD/receiver/target/test-classpath.txt" >/dev/null
fi
cp="receiver/target/test-classes:receiver/target/classes:$(cat receiver/target/test-classpath.txt)"
jar=${JAR:-$root/receiver/target/gospan.jar}
bin=$(realpath examples/bin)

pids=()
cleanup() {
  for ((i=${#pids[@]}-1; i>=0; i--)); do kill -TERM "${pids[$i]}" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

java -cp "$cp" io.gospan.receiver.bench.CountingOtlpReceiver > "$out/receiver.log" 2>&1 &
pids+=($!)
"$bin/greeter-server" -addr 127.0.0.1:0 > "$out/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  grep -q '^http' "$out/receiver.log" 2>/dev/null && grep -q 'listening on' "$out/server.log" 2>/dev/null && break
  sleep 0.1
done
# EXPORT_PROTOCOL=http/protobuf exports over OTLP/HTTP instead; BATCH_SIZE, QUEUE_SIZE set exporter.batch.* (unset:
# gospan's defaults); EXTRA_YAML is appended to the configuration (top-level sections not written above)
if [ "${EXPORT_PROTOCOL:-grpc}" = grpc ]; then
  endpoint=$(head -n 1 "$out/receiver.log" | awk '{print $1}')
else
  endpoint=$(head -n 1 "$out/receiver.log" | awk '{print $2}') # /v1/traces is appended
fi
addr=$(grep -o 'listening on [^ ]*' "$out/server.log" | head -n 1 | awk '{print $3}')
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$out/gospan.yaml" <<EOF
exporter:
  type: otlp
  otlp:
    protocol: ${EXPORT_PROTOCOL:-grpc}
    endpoint: $endpoint
$( [ -n "${QUEUE_SIZE:-}${BATCH_SIZE:-}" ] && printf '  batch:\n' )
$( [ -n "${QUEUE_SIZE:-}" ] && printf '    max_queue_size: %s\n' "$QUEUE_SIZE" )
$( [ -n "${BATCH_SIZE:-}" ] && printf '    max_export_batch_size: %s\n' "$BATCH_SIZE" )
metrics:
  enabled: false
telemetry:
  http:
    enabled: true
    address: 127.0.0.1:$port
discovery:
  instrument:
    - exe_path: "$bin/*"
${EXTRA_YAML:-}
EOF
# the README's recommended settings (LoadBenchmark.JVM, ENV)
MALLOC_ARENA_MAX=2 java -Xms32m -Xmx128m -XX:+UseSerialGC -XX:MaxMetaspaceSize=96m -Xss512k -XX:TrimNativeHeapInterval=5000 \
  -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints ${PROFILE_JVM_OPTS:-} \
  -jar "$jar" run --config "$out/gospan.yaml" > "$out/gospan.log" 2>&1 &
gospan=$!
pids+=($gospan)
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 ~ "^"m"({|$)" {s+=$NF} END {print s+0}'; }
for _ in $(seq 150); do
  [ "$(metric gospan_processes_traced 2>/dev/null || echo 0)" != 0 ] && break
  sleep 0.2
done
cpu() { awk '{print $14+$15}' "/proc/$gospan/stat"; }
# utime+stime ticks per thread name (digits dropped, so a pool's threads add up)
threads_cpu() {
  for t in /proc/$gospan/task/*; do
    printf '%s\t%s\n' "$(tr -d '0-9' < "$t/comm" 2>/dev/null)" "$(cut -d')' -f2 "$t/stat" 2>/dev/null | awk '{print $12+$13}')"
  done | awk -F'\t' '$2 != "" {s[$1]+=$2} END {for (k in s) print k "\t" s[k]}' | sort
}
spans() { tail -n 1 "$out/receiver.log" | awk '{print $2}'; }
client() { "$bin/greeter-client" -addr "$addr" -quiet "$@" | tail -n 1; }
client -n 1 >/dev/null
# the client's binary is known once discovery traced one of its processes: from then on every
# process of it is traced from its first call
for _ in $(seq 100); do
  grep -q "tracing pid .*greeter-client" "$out/gospan.log" && break
  client -n 200 >/dev/null
done
client -n 20000 -concurrency 8 >/dev/null
sleep 20 # the JIT compiles the warm-up's hot code

run() {
  local name=$1; shift
  local c0 s0 lost0 res c1 s1 lost1 calls
  c0=$(cpu); s0=$(spans); lost0=$(metric gospan_events_lost_total); threads_cpu > "$out/$name.threads0"
  local log0
  log0=$(wc -l < "$out/gospan.log")
  if [ -n "${NO_PROFILER:-}" ]; then
    :
  elif [ -n "${ASYNC_PROFILER:-}" ]; then
    jcmd "$gospan" JVMTI.agent_load "$ASYNC_PROFILER" "\"start,event=cpu,interval=1ms,threads\"" >/dev/null
  else
    jcmd "$gospan" JFR.start name="$name" settings=profile filename="$out/$name.jfr" >/dev/null
  fi
  res=$(client "$@")
  sleep 2.5 # the ring buffer's poll period, the batch processor's 1 s delay, the receiver's 1 s count
  if [ -n "${NO_PROFILER:-}" ]; then
    :
  elif [ -n "${ASYNC_PROFILER:-}" ]; then
    jcmd "$gospan" JVMTI.agent_load "$ASYNC_PROFILER" "\"stop,file=$out/$name.collapsed,collapsed\"" >/dev/null
  else
    jcmd "$gospan" JFR.stop name="$name" >/dev/null
  fi
  c1=$(cpu); s1=$(spans); lost1=$(metric gospan_events_lost_total); threads_cpu > "$out/$name.threads1"
  calls=$(echo "$res" | python3 -c 'import json,sys; print(json.load(sys.stdin)["calls"])')
  local exported=$((s1 - s0))
  echo "== $name: $calls calls, $exported spans exported, events lost $((lost1 - lost0)), sidecar CPU $(( (c1 - c0) * 10000 / (exported > 0 ? exported : 1) )) us/span (profiler on, 10 ms ticks), RSS $(awk '/VmRSS/ {print $2/1024 " MiB"}' /proc/$gospan/status)" | tee "$out/$name.txt"
  echo "   client: $res" | tee -a "$out/$name.txt"
  echo "   sidecar CPU us/span by thread: $(join -t $'\t' -a 2 -e 0 -o 0,1.2,2.2 "$out/$name.threads0" "$out/$name.threads1" \
    | awk -F'\t' -v n="$exported" '{d=($3-$2)*10000/(n>0?n:1); if (d>0) printf "%s %.1f; ", $1, d}')" | tee -a "$out/$name.txt"
  curl -s "http://127.0.0.1:$port/metrics" | grep -E '^(gospan_events|gospan_spans|otel_sdk_processor|gospan_streams|gospan_links)' > "$out/$name.metrics" || true
  # with PROFILE_JVM_OPTS=-XX:+PrintCompilation: methods the JIT compiled during the run
  echo "   log lines during the run (e.g. -XX:+PrintCompilation): $(( $(wc -l < "$out/gospan.log") - log0 ))" | tee -a "$out/$name.txt"
  tail -n +$((log0 + 1)) "$out/gospan.log" > "$out/$name.log"
  if [ -n "${NO_PROFILER:-}" ]; then
    :
  elif [ -n "${ASYNC_PROFILER:-}" ]; then
    scripts/collapsed-summary.py "$out/$name.collapsed" "$exported" 1000 30 >> "$out/$name.txt"
  else
    java -cp "$cp" io.gospan.receiver.bench.JfrSummary "$out/$name.jfr" "$exported" 25 >> "$out/$name.txt"
  fi
}
for w in ${WORKLOADS:-unary-1 unary-16 unary-2000s}; do
  case $w in
    unary-16*) run "$w" -rpc unary -n 40000 -concurrency 16 -conns 4 ;;
    unary-2000s*) run "$w" -rpc unary -n 10000 -rate 2000 -concurrency 16 -conns 4 ;;
    unary-500s*) run "$w" -rpc unary -n 12000 -rate 500 -concurrency 16 -conns 4 ;; # 1,000 spans/s
    unary-10000s*) run "$w" -rpc unary -n 50000 -rate 10000 -concurrency 16 -conns 4 ;; # 20,000 spans/s
    unary-1*) run "$w" -rpc unary -n 4000 -concurrency 1 ;;
    stream-4*) run "$w" -rpc server-stream -reply-count 10 -n 8000 -concurrency 4 ;;
  esac
done
# idle: the sidecar's CPU while the traced programs wait (the server runs, no calls), by thread
idle=${IDLE_SECONDS:-30}
c0=$(cpu); threads_cpu > "$out/idle.threads0"
sleep "$idle"
c1=$(cpu); threads_cpu > "$out/idle.threads1"
echo "== idle ${idle}s: sidecar CPU $(awk -v d=$((c1 - c0)) -v s="$idle" 'BEGIN {printf "%.2f", d / s}') % of a core (10 ms ticks), RSS $(awk '/VmRSS/ {print $2/1024 " MiB"}' /proc/$gospan/status); by thread, ms: $(join -t $'\t' -a 2 -e 0 -o 0,1.2,2.2 "$out/idle.threads0" "$out/idle.threads1" \
  | awk -F'\t' '{d=($3-$2)*10; if (d>0) printf "%s %d; ", $1, d}')" | tee "$out/idle.txt"

# where the RSS is: the kernel's split, and the JVM's own with PROFILE_JVM_OPTS=-XX:NativeMemoryTracking=summary
cat "/proc/$gospan/smaps_rollup" > "$out/smaps_rollup.txt"
cat "/proc/$gospan/smaps" > "$out/smaps.txt"
if [[ "${PROFILE_JVM_OPTS:-}" == *NativeMemoryTracking* ]]; then
  jcmd "$gospan" VM.native_memory summary > "$out/nmt.txt"
fi
echo "reports and recordings in $out"
