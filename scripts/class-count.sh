#!/usr/bin/env bash
# Classes the sidecar loads, per component, in several configurations: each runs `gospan run`
# with -Xlog:class+load, idle for IDLE seconds after it is ready (nothing to trace), then for
# LOAD seconds while the example greeter is called (unary, 200 calls/s, traced); one markdown
# table for the idle points and one after the load. Spans and metrics go to a receiver that only
# counts (the load benchmark's CountingOtlpReceiver, its own JVM), over OTLP/gRPC or OTLP/HTTP as
# the configuration says. Usage (root):
#   scripts/class-count.sh [JAR]        (default receiver/target/gospan.jar; IDLE=12 LOAD=10;
#                                        KEEP=1 keeps the class logs in /tmp/gospan-class-count.*)
# The sidecar selects only this run's copies of the greeter (exe_path under a fresh directory)
# and uses its own ports (19464 /metrics, 19465 link, 50551 greeter).
set -euo pipefail
cd "$(dirname "$0")/.."
jar=$(realpath "${1:-receiver/target/gospan.jar}")
idle=${IDLE:-12}
load=${LOAD:-10}
[ -f "$jar" ] || { echo "no jar at $jar (mvn -pl receiver -am package -DskipTests)" >&2; exit 2; }
examples/build.sh >/dev/null
mvn -B -q -ntp -pl receiver -am -DskipTests test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$PWD/receiver/target/test-classpath.txt" >/dev/null
work=$(mktemp -d /tmp/gospan-class-count.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT
cp examples/bin/greeter-server examples/bin/greeter-client "$work/"
java -cp "receiver/target/test-classes:receiver/target/classes:$(cat receiver/target/test-classpath.txt)" \
  io.gospan.receiver.bench.CountingOtlpReceiver >"$work/receiver.out" 2>"$work/receiver.err" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/receiver.out" ] && break; sleep 0.2; done
read -r otlp_grpc otlp_http <"$work/receiver.out"

# name: link.enabled metrics.enabled metrics.prometheus telemetry.http.enabled queue.directory protocol
configs=(
  "default true true true true - grpc"
  "link-off false true true true - grpc"
  "prometheus-off true true false true - grpc"
  "telemetry-http-off true true true false - grpc"
  "metrics-off true false true true - grpc"
  "lean false false false false - grpc"
  "lean-http false false false false - http/protobuf"
  "disk-queue true true true true $work/queue grpc"
  "http-protobuf true true true true - http/protobuf"
)
config() { # NAME LINK METRICS PROMETHEUS HTTP DIR PROTOCOL -> $work/NAME.yaml
  local endpoint=$otlp_grpc; [ "$7" = grpc ] || endpoint=$otlp_http
  cat >"$work/$1.yaml" <<YAML
discovery:
  instrument: [{exe_path: "$work/*"}]
link: {enabled: $2, listen: "127.0.0.1:19465"}
metrics: {enabled: $3, prometheus: $4}
telemetry:
  http: {enabled: $5, address: "127.0.0.1:19464"}
exporter:
  otlp: {protocol: $7, endpoint: "$endpoint"}
$([ "$6" = - ] || echo "  queue: {directory: \"$6\"}")
YAML
}

idle_cols=(); load_cols=()
for line in "${configs[@]}"; do
  read -r c _ <<<"$line"
  config $line
  log="$work/$c.out"
  java -Xlog:class+load=info:file="$work/$c.classes" -jar "$jar" run --config "$work/$c.yaml" >"$log" 2>&1 &
  g=$!; pids+=("$g")
  for _ in $(seq 300); do grep -q "waiting for Go gRPC processes" "$log" && break; sleep 0.2; done
  grep -q "waiting for Go gRPC processes" "$log" || { cat "$log" >&2; echo "$c: gospan not ready" >&2; exit 1; }
  sleep "$idle"
  cp "$work/$c.classes" "$work/$c.idle"
  "$work/greeter-server" -addr 127.0.0.1:50551 >/dev/null 2>&1 &
  s=$!; pids+=("$s")
  sleep 1
  "$work/greeter-client" -addr 127.0.0.1:50551 -n $((load * 200)) -rate 200 >/dev/null
  sleep 8 # spans end, are assembled and exported (the batch processor's 5 s delay)
  cp "$work/$c.classes" "$work/$c.load"
  grep -q "tracing pid" "$log" || { cat "$log" >&2; echo "$c: the greeter was not traced" >&2; exit 1; }
  kill "$s" "$g"; wait "$g" 2>/dev/null || true; wait "$s" 2>/dev/null || true
  idle_cols+=("$c=$work/$c.idle"); load_cols+=("$c=$work/$c.load")
done
echo "jar: $jar; the receiver counted $(tail -1 "$work/receiver.out" | cut -d' ' -f2) spans in all"
echo "idle ${idle} s after ready:"
scripts/class-count.py "${idle_cols[@]}"
echo
echo "after ${load} s of unary calls at 200/s (traced):"
scripts/class-count.py "${load_cols[@]}"
