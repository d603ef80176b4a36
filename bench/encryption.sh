#!/usr/bin/env bash
# Measures the cost of encryption at rest (docs/ENCRYPTION.md): for each
# of IGGO_BENCH_RUNS rounds (default 3), once with system.encryption off
# and once on, a fresh `iggo server` process on a new data directory, then
#   enc-MODE-pp1   pinned-producer, 1 producer
#   enc-MODE-pc1   pinned-consumer, 1 consumer
# with 1000 x 1000-byte messages per batch and IGGO_BENCH_BATCHES batches
# (default 200, i.e. 200 MB per figure). The key is generated for the run
# and given through IGGY_SYSTEM_ENCRYPTION_ENABLED / _KEY. Results go to
# bench/results/enc-*.json; the last table is the median per figure.
# Usage: bench/encryption.sh [extra iggo bench flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${IGGO_BENCH_OUT:-bench/results}
port=${IGGO_BENCH_PORT:-8393}
batches=${IGGO_BENCH_BATCHES:-200}
tmp=$(mktemp -d)
bin=$tmp/iggo
server=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$bin" ./cmd/iggo
key=$(head -c 32 /dev/urandom | base64)
mkdir -p "$out"
names=()
start=$(date +%s)
for run in $(seq "${IGGO_BENCH_RUNS:-3}"); do
  for mode in off on; do
    data=$tmp/data-$mode-$run
    enabled=false
    [ "$mode" = on ] && enabled=true
    IGGY_SYSTEM_ENCRYPTION_ENABLED=$enabled IGGY_SYSTEM_ENCRYPTION_KEY=$key \
      IGGY_QUIC_ADDRESS=127.0.0.1:0 IGGY_WEBSOCKET_ADDRESS=127.0.0.1:0 IGGY_HTTP_ENABLED=false \
      "$bin" server --fresh --data-path "$data" --tcp-address "127.0.0.1:$port" --log-level warn &
    server=$!
    for _ in $(seq 50); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    while read -r name args; do
      echo "== encryption $mode: iggo bench $args --name enc-$mode-${name}_run$run"
      # shellcheck disable=SC2086 # $args is a list of flags
      "$bin" bench $args --addr "127.0.0.1:$port" --message-batches "$batches" --baseline 0 --disk-baseline 0 \
        --no-progress --output-dir "$out" --name "enc-$mode-${name}_run$run" "$@" < /dev/null
      names+=("$out/enc-$mode-${name}_run$run.json")
    done <<'RUNS'
pp1 pinned-producer --producers 1
pc1 pinned-consumer --consumers 1
RUNS
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
    rm -rf "$data"
  done
done
"$bin" bench compare --medians "${names[@]}"
echo "took $(( $(date +%s) - start )) s"
