#!/usr/bin/env bash
# The one-command demo: builds what is missing, starts gospan, then a chain of three
# example programs, greeter-client -> greeter-relay -> greeter-server (two clients: one
# cycling through the four RPC shapes, one asking for NOT_FOUND; the relay answers each call
# by calling the server twice, from the handler's goroutine and from a goroutine it starts,
# and every 5 s from a background loop), and shows the spans gospan prints, one line each
# with its service, trace, span and parent: each client call is one trace,
#   greeter-client CLIENT -> greeter-relay SERVER -> 2 x greeter-relay CLIENT
#                                                 -> 2 x greeter-server SERVER
# (a relay CLIENT span's parent is the relay SERVER span of the call it was made for; the
# background calls are roots, parent=-), with their status.
#
#   sudo examples/demo.sh                 # until Ctrl-C
#   DEMO_SECONDS=20 sudo examples/demo.sh # stop by itself
#
# With OTEL_EXPORTER_OTLP_ENDPOINT set (e.g. http://127.0.0.1:4317), spans are also exported
# there over OTLP. Everything the demo started is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ "$(id -u)" -ne 0 ]; then
  echo "demo.sh: run as root: gospan loads BPF programs and attaches uprobes" >&2
  exit 1
fi
scripts/install-deps.sh
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
bin=$(examples/build.sh | tail -n 1)
jar=receiver/target/gospan.jar
if [ ! -f "$jar" ] || [ -n "$(find bpf receiver/src offsets/src -newer "$jar" -type f -print -quit)" ]; then
  echo "demo.sh: building gospan (mvn package)..." >&2
  mvn -B -q -ntp -DskipTests package >&2
fi

config=examples/demo.yaml
if [ -n "${OTEL_EXPORTER_OTLP_ENDPOINT:-}" ]; then
  config=$(mktemp)
  printf 'exporter:\n  type: otlp\n  console: true\n  batch:\n    schedule_delay: 1s\nmetrics:\n  enabled: false\ntelemetry:\n  http:\n    enabled: true\n    address: 127.0.0.1:9464\n' > "$config"
  echo "demo.sh: printing spans and exporting them to $OTEL_EXPORTER_OTLP_ENDPOINT over OTLP" >&2
fi

pids=()
cleanup() {
  trap - EXIT INT TERM
  for ((i=${#pids[@]}-1; i>=0; i--)); do kill -TERM "${pids[$i]}" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 0' INT TERM

log=$(mktemp)
java -jar "$jar" run --config "$config" > >(tee "$log") 2>&1 &
gospan=$!
pids+=("$gospan")
for _ in $(seq 1 100); do
  grep -q "waiting for Go gRPC processes" "$log" && break
  kill -0 "$gospan" 2>/dev/null || { echo "demo.sh: gospan exited, see above" >&2; exit 1; }
  sleep 0.2
done

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
port=$(free_port)
relay_port=$(free_port)
"$bin/greeter-server" -addr "127.0.0.1:$port" >/dev/null 2>&1 &
pids+=("$!")
"$bin/greeter-relay" -addr "127.0.0.1:$relay_port" -upstream "127.0.0.1:$port" -background 5s >/dev/null 2>&1 &
pids+=("$!")
sleep 1 # gospan attaches to the server and the relay on its next scan (every 500 ms)
"$bin/greeter-client" -addr "127.0.0.1:$relay_port" -rpc all -n 0 -rate 1 -quiet >/dev/null 2>&1 &
pids+=("$!")
"$bin/greeter-client" -addr "127.0.0.1:$relay_port" -rpc unary -n 0 -rate 0.5 -fail-code NOT_FOUND -quiet >/dev/null 2>&1 &
pids+=("$!")
echo "demo.sh: greeter-client x2 -> greeter-relay on 127.0.0.1:$relay_port -> greeter-server on 127.0.0.1:$port;" \
  "spans follow, parent=- is a root (Ctrl-C stops)" >&2

if [ -n "${DEMO_SECONDS:-}" ]; then
  sleep "$DEMO_SECONDS"
else
  wait "$gospan"
fi
