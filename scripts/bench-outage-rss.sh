#!/usr/bin/env bash
# The sidecar's RSS while the collector is down and calls flow at full speed, then after the
# load stops: the gospan jar with the recommended JVM flags (README), OTLP to a port where
# nothing listens, so every span goes to the export queue (exporter.queue.max_bytes, default
# 32MiB) and, past its bound, is dropped and counted. Prints RSS every 5 s, the peak, the RSS
# 30 s after the load, and gospan's own counts from /metrics.
# Usage: scripts/bench-outage-rss.sh [load-seconds] [concurrency]   (root; after mvn package)
# QUEUE_MAX_BYTES=0 scripts/bench-outage-rss.sh: the same without the export queue.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
conc=${2:-16}
jar=receiver/target/gospan.jar
[ -f "$jar" ] || { echo "build first: mvn -B -ntp -DskipTests package" >&2; exit 2; }
dead=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
tport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cfg=$(mktemp --suffix .yaml)
log=$(mktemp --suffix .log)
cat >"$cfg" <<YAML
exporter:
  otlp: {endpoint: "http://127.0.0.1:$dead"}
  queue: {max_bytes: ${QUEUE_MAX_BYTES:-32MiB}}
telemetry: {http: {address: "127.0.0.1:$tport"}}
discovery:
  instrument:
    - exe_path: "$PWD/examples/bin/greeter-*"
YAML
java -Xms32m -Xmx128m -XX:+UseSerialGC -XX:MaxMetaspaceSize=96m -Xss512k -jar "$jar" run --config "$cfg" >"$log" 2>&1 &
gospan=$!
server_out=$(mktemp)
examples/bin/greeter-server -addr 127.0.0.1:0 >"$server_out" 2>/dev/null &
server=$!
cleanup() { kill "$client" "$server" 2>/dev/null || true; kill "$gospan" 2>/dev/null || true; wait 2>/dev/null || true; rm -f "$cfg" "$server_out"; }
trap cleanup EXIT
for _ in $(seq 100); do grep -q "listening on" "$server_out" && grep -q "tracing pid $server " "$log" && break; sleep 0.2; done
addr=$(sed -n 's/^listening on //p' "$server_out" | head -1)
rss() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$gospan/status"; }
echo "idle, server traced: RSS $(rss) MiB"
examples/bin/greeter-client -addr "$addr" -quiet -n 0 -concurrency "$conc" -rpc unary >/dev/null 2>&1 &
client=$!
peak=0
for i in $(seq 1 "$secs"); do
  sleep 1
  r=$(rss); [ "$r" -gt "$peak" ] && peak=$r
  [ $((i % 5)) -eq 0 ] && echo "load ${i}s: RSS $r MiB"
done
kill "$client"; wait "$client" 2>/dev/null || true
echo "peak under load: $peak MiB"
sleep 30
echo "30 s after the load: RSS $(rss) MiB"
curl -s "http://127.0.0.1:$tport/metrics" | grep -E '^(gospan_export_queue|otel_sdk_processor_span_processed|gospan_events_lost)' || true
grep -E "export queue dropped|queuing them" "$log" | tail -3 || true
echo "gospan log: $log"
