#!/usr/bin/env bash
# Smoke test of greeter-server and greeter-client: starts servers on free
# loopback ports (plain, TLS, net/http handler over h2c and over TLS), runs
# the client in every mode and checks its JSON line and exit status, and
# checks that the server exits 0 on SIGTERM.
#
# Usage: smoke.sh [BINDIR [CLIENT_BINDIR]]   (default: bin; build it with build.sh)
#        smoke.sh "$(./build.sh --go 1.16.15 --grpc v1.40.0 | tail -1)"
#        smoke.sh bin "$(./build.sh --go 1.16.15 --grpc v1.32.0 | tail -1)"   # old client, new server
#
# Only 127.0.0.1 is used. Prints "N passed, N failed" and exits 1 if any
# check failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bindir=${1:-$here/bin}
server=$bindir/greeter-server
client=${2:-$bindir}/greeter-client
certs=$here/bin/certs
for f in "$server" "$client"; do
    [[ -x "$f" ]] || { echo "smoke.sh: $f missing; run build.sh first" >&2; exit 1; }
done
"$here/certs.sh" "$certs" 2>/dev/null

work=$(mktemp -d "${TMPDIR:-/tmp}/gospan-smoke.XXXXXX")
server_pids=()
cleanup() {
    for pid in ${server_pids[@]+"${server_pids[@]}"}; do
        kill "$pid" 2>/dev/null
    done
    rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# start_server NAME ARGS...: starts a server on a free port; sets $addr and
# $pid (and remembers the pid for cleanup).
start_server() {
    local name=$1
    shift
    "$server" -addr 127.0.0.1:0 "$@" >"$work/$name.out" 2>"$work/$name.err" &
    pid=$!
    server_pids+=("$pid")
    addr=
    for _ in $(seq 100); do
        addr=$(sed -n 's/^listening on //p' "$work/$name.out")
        [[ -n "$addr" ]] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if [[ -z "$addr" ]]; then
        fail "server $name did not start: $(cat "$work/$name.err")"
        return 1
    fi
    if [[ $(wc -l <"$work/$name.out") -ne 1 ]]; then
        fail "server $name: stdout is not exactly one line"
    fi
    echo "     server $name (pid $pid) on $addr"
}

# stop_server NAME PID: SIGTERM, expect exit status 0 within 10 s.
stop_server() {
    local name=$1 p=$2
    kill -TERM "$p"
    local rc
    for _ in $(seq 200); do
        kill -0 "$p" 2>/dev/null || break
        sleep 0.05
    done
    wait "$p"
    rc=$?
    if [[ $rc -eq 0 ]]; then pass "server $name exits 0 on SIGTERM"; else fail "server $name exit status $rc on SIGTERM"; fi
}

# expect_client DESC WANT_RC 'JSON-FRAGMENT'... -- CLIENT-ARGS...: runs the
# client, checks its exit status and, if fragments are given, that it printed
# one JSON line containing every fragment.
expect_client() {
    local desc=$1 want_rc=$2
    shift 2
    local fragments=()
    while [[ $# -gt 0 && "$1" != "--" ]]; do
        fragments+=("$1")
        shift
    done
    shift
    local out rc
    out=$("$client" -quiet "$@" 2>"$work/client.err")
    rc=$?
    local ok=1 why=""
    if [[ $rc -ne $want_rc ]]; then ok=0; why="exit status $rc, want $want_rc"; fi
    # Setup and usage errors print no JSON; only check it when asked for.
    if [[ ${#fragments[@]} -gt 0 ]] && [[ $(printf '%s\n' "$out" | wc -l) -ne 1 || "$out" != "{"*"}" ]]; then
        ok=0
        why="$why; stdout is not one JSON line"
    fi
    for f in ${fragments[@]+"${fragments[@]}"}; do
        if [[ "$out" != *"$f"* ]]; then ok=0; why="$why; missing $f"; fi
    done
    if [[ $ok -eq 1 ]]; then
        pass "$desc: $out"
    else
        fail "$desc: ${why#; }: $out $(head -c 500 "$work/client.err")"
    fi
}

# The calls every server mode must answer the same way.
common_checks() {
    local mode=$1
    shift
    local c=(-addr "$addr" "$@")
    expect_client "$mode unary OK" 0 '"calls":3,' '"codes":{"OK":3}' '"messages":3,' -- "${c[@]}" -n 3
    expect_client "$mode server-stream OK" 0 '"codes":{"OK":1}' '"messages":5,' -- "${c[@]}" -rpc server-stream -reply-count 5
    expect_client "$mode client-stream OK" 0 '"codes":{"OK":1}' '"messages":1,' -- "${c[@]}" -rpc client-stream -messages 4
    expect_client "$mode bidi OK" 0 '"codes":{"OK":1}' '"messages":4,' -- "${c[@]}" -rpc bidi -messages 4
    expect_client "$mode all kinds" 0 '"calls":8,' '"codes":{"OK":8}' -- "${c[@]}" -rpc all -n 8
    expect_client "$mode unary NOT_FOUND" 0 '"codes":{"NOT_FOUND":1}' '"expected":"NOT_FOUND"' -- "${c[@]}" -fail-code NOT_FOUND
    expect_client "$mode unary INTERNAL by number" 0 '"codes":{"INTERNAL":1}' -- "${c[@]}" -fail-code 13
    expect_client "$mode server-stream trailers-only NOT_FOUND" 0 '"codes":{"NOT_FOUND":1}' '"messages":0,' -- "${c[@]}" -rpc server-stream -fail-code NOT_FOUND -fail-after 0
    expect_client "$mode server-stream fails after 2" 0 '"codes":{"UNAVAILABLE":1}' '"messages":2,' -- "${c[@]}" -rpc server-stream -fail-code UNAVAILABLE -fail-after 2 -reply-count 5
    expect_client "$mode client-stream trailers-only" 0 '"codes":{"PERMISSION_DENIED":1}' '"messages":0,' -- "${c[@]}" -rpc client-stream -fail-code PERMISSION_DENIED
    expect_client "$mode bidi trailers-only" 0 '"codes":{"ABORTED":1}' '"messages":0,' -- "${c[@]}" -rpc bidi -fail-code ABORTED
    expect_client "$mode bidi fails after 2" 0 '"codes":{"ABORTED":1}' '"messages":2,' -- "${c[@]}" -rpc bidi -fail-code ABORTED -fail-after 2 -messages 4
    expect_client "$mode DEADLINE_EXCEEDED" 0 '"codes":{"DEADLINE_EXCEEDED":4}' -- "${c[@]}" -rpc all -n 4 -delay-ms 1000 -deadline 50ms
    expect_client "$mode delay within deadline" 0 '"codes":{"OK":1}' -- "${c[@]}" -delay-ms 20 -deadline 2s
    expect_client "$mode unexpected code exits 1" 1 '"codes":{"NOT_FOUND":1}' '"unexpected":1' -- "${c[@]}" -fail-code NOT_FOUND -expect OK
    expect_client "$mode headers" 0 '"codes":{"OK":2}' -- "${c[@]}" -n 2 -header 'authorization=Bearer secret' \
        -header traceparent=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01
    expect_client "$mode load 5 conns x 20" 0 '"calls":1000,' '"codes":{"OK":1000}' -- "${c[@]}" -rpc all -conns 5 -concurrency 20 -n 1000
}

echo "smoke.sh: $server, $client"

# --- plain grpc-go transport ---
start_server plain || exit 1
plain_pid=$pid
common_checks plain
expect_client "plain rate 100/s" 0 '"calls":20,' -- -addr "$addr" -n 20 -rate 100
expect_client "usage error exits 2" 2 -- -addr "$addr" -rpc nope 2>/dev/null
# -conns really opens that many connections: count them while calls run.
"$client" -quiet -addr "$addr" -conns 5 -n 0 -rate 50 >"$work/forever.out" 2>&1 &
cpid=$!
sleep 1
port=${addr##*:}
nconn=$(ss -Htn state established "( dport = :$port )" 2>/dev/null | wc -l)
kill -INT "$cpid"
wait "$cpid"
crc=$?
if [[ "$nconn" -eq 5 ]]; then pass "-conns 5 opens 5 TCP connections"; else fail "-conns 5: $nconn connections seen"; fi
if [[ $crc -eq 0 && "$(cat "$work/forever.out")" == '{"calls":'* ]]; then
    pass "-n 0 stops on SIGINT and reports: $(cat "$work/forever.out")"
else
    fail "-n 0 + SIGINT: exit status $crc, output $(cat "$work/forever.out")"
fi
stop_server plain "$plain_pid"
expect_client "no server exits 1" 1 -- -addr "$addr" -dial-timeout 500ms

# --- TLS ---
start_server tls -tls -tls-cert "$certs/server.pem" -tls-key "$certs/server-key.pem" || exit 1
tls_pid=$pid
common_checks tls -tls -ca "$certs/ca.pem"
expect_client "tls -server-name localhost" 0 '"codes":{"OK":1}' -- -addr "$addr" -tls -ca "$certs/ca.pem" -server-name localhost
expect_client "tls without the CA fails" 1 -- -addr "$addr" -tls -dial-timeout 1s
stop_server tls "$tls_pid"

# --- net/http handler, h2c (golang.org/x/net/http2) ---
start_server http-h2c -http-handler || exit 1
h2c_pid=$pid
common_checks http-h2c
stop_server http-h2c "$h2c_pid"

# --- net/http handler, TLS (net/http's bundled HTTP/2) ---
start_server http-tls -http-handler -tls -tls-cert "$certs/server.pem" -tls-key "$certs/server-key.pem" || exit 1
htls_pid=$pid
common_checks http-tls -tls -ca "$certs/ca.pem"
stop_server http-tls "$htls_pid"

echo "smoke: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
