#!/usr/bin/env bash
# Scale check: a broker with many partitions and many idle clients.
# Starts `iggo server` on a fresh data directory, creates STREAMS x TOPICS
# x PARTITIONS partitions (default 100 x 10 x 10 = 10,000), logs in
# CLIENTS idle connections (default 1,000) and observes the idle broker
# (CPU, RSS, threads, open files); then stops it, starts it again on the
# same directory, reports how long it took to answer (start-up with all
# partitions recovered) and observes it idle again without clients.
# Writes bench/results/scale-loaded.json and scale-restarted.json.
# Usage: bench/scale.sh   (IGGO_SCALE_STREAMS, _TOPICS, _PARTITIONS,
#        _CLIENTS, _IDLE and IGGO_BENCH_PORT change the defaults)
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/results
streams=${IGGO_SCALE_STREAMS:-100}
topics=${IGGO_SCALE_TOPICS:-10}
parts=${IGGO_SCALE_PARTITIONS:-10}
clients=${IGGO_SCALE_CLIENTS:-1000}
idle=${IGGO_SCALE_IDLE:-30s}
port=${IGGO_BENCH_PORT:-8392}
# Every partition keeps its active segment's log and index open, every
# client is a socket: raise the descriptor limit where allowed.
need=$((streams * topics * parts * 3 + clients + 1024))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$need" ]; then
  ulimit -n "$need" 2>/dev/null || ulimit -Hn "$need" 2>/dev/null && ulimit -n "$need" 2>/dev/null ||
    echo "warning: open file limit $(ulimit -n) is below the $need this run needs" >&2
fi
bin=$(mktemp -d)/iggo
data=$(mktemp -d)
go build -o "$bin" ./cmd/iggo
server=
stop() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=
  fi
}
trap 'stop; rm -rf "$data" "$(dirname "$bin")"' EXIT
mkdir -p "$out"
IGGY_QUIC_ADDRESS=127.0.0.1:0 IGGY_WEBSOCKET_ADDRESS=127.0.0.1:0 IGGY_HTTP_ADDRESS=127.0.0.1:0 "$bin" server --fresh --data-path "$data" --tcp-address "127.0.0.1:$port" --log-level warn &
server=$!
"$bin" bench scale --addr "127.0.0.1:$port" --streams "$streams" --topics "$topics" --partitions "$parts" \
  --clients "$clients" --idle "$idle" --keep --output "$out/scale-loaded.json"
t0=$(date +%s.%N)
stop
echo "stopped the broker in $(echo "$(date +%s.%N) - $t0" | bc) s"
IGGY_QUIC_ADDRESS=127.0.0.1:0 IGGY_WEBSOCKET_ADDRESS=127.0.0.1:0 IGGY_HTTP_ADDRESS=127.0.0.1:0 "$bin" server --data-path "$data" --tcp-address "127.0.0.1:$port" --log-level warn &
server=$!
"$bin" bench scale --addr "127.0.0.1:$port" --streams "$streams" --topics "$topics" --partitions "$parts" \
  --create=false --clients 0 --idle "$idle" --output "$out/scale-restarted.json"
echo "data directory: $(du -sh "$data" | cut -f1)"
