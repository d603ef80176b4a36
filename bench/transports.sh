#!/usr/bin/env bash
# Per-transport figures: builds iggo, starts `iggo server --fresh` as its own
# process on a new data directory with TCP, QUIC and WebSocket on loopback
# ports, and runs pinned-producer and pinned-consumer (1 actor, batches of
# 1000 x 1000-byte messages) over each transport, IGGO_BENCH_RUNS rounds
# (default 3). Every run measures the loopback TCP baseline first; the
# script ends with `iggo bench compare --medians`.
# Usage: bench/transports.sh [extra iggo bench flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${IGGO_BENCH_OUT:-bench/results}
tmp=$(mktemp -d)
bin=$tmp/iggo
data=$tmp/data
port=${IGGO_BENCH_PORT:-8391}
go build -o "$bin" ./cmd/iggo
IGGY_QUIC_ADDRESS=127.0.0.1:$((port + 1)) IGGY_WEBSOCKET_ADDRESS=127.0.0.1:$((port + 2)) IGGY_HTTP_ADDRESS=127.0.0.1:$((port + 3)) \
  "$bin" server --fresh --data-path "$data" --tcp-address "127.0.0.1:$port" --log-level warn &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do (echo >"/dev/tcp/127.0.0.1/$((port + 2))") 2>/dev/null && break; sleep 0.1; done
mkdir -p "$out"
declare -A addr=([tcp]=$port [quic]=$((port + 1)) [ws]=$((port + 2)))
extra=("$@")
for run in $(seq "${IGGO_BENCH_RUNS:-3}"); do
  for tr in tcp quic ws; do
    for fig in pp1 pc1; do
      if [ "$fig" = pp1 ]; then args=(pinned-producer --producers 1); else args=(pinned-consumer --consumers 1); fi
      echo "== iggo bench ${args[*]} --transport $tr --addr 127.0.0.1:${addr[$tr]} (run $run)"
      "$bin" bench "${args[@]}" --transport "$tr" --addr "127.0.0.1:${addr[$tr]}" --disk-baseline 0 \
        --no-progress --output-dir "$out" --name "$fig-${tr}_run$run" "${extra[@]}"
    done
  done
done
"$bin" bench compare --medians "$out"/pp1-tcp_run*.json "$out"/pc1-tcp_run*.json \
  "$out"/pp1-quic_run*.json "$out"/pc1-quic_run*.json "$out"/pp1-ws_run*.json "$out"/pc1-ws_run*.json
