#!/usr/bin/env bash
# Reproduces the figures of bench/README.md in one command: builds iggo,
# starts `iggo server` as its own process on a fresh data directory, and
# runs, IGGO_BENCH_RUNS times (default 3) interleaved, with 1000 x
# 1000-byte messages per batch:
#   pp1         pinned-producer, 1 producer
#   pp1-fsync   the same with enforce_fsync
#   pc1         pinned-consumer, 1 consumer
#   pp2         pinned-producer, 2 producers
#   rate5k      1 producer, 1 message per request, 5000 requests/s
# Every run measures the loopback TCP and the disk baseline first (the
# disk one in a directory on the data directory's file system) and
# records the server's CPU time. Results go to bench/results/*.json (and
# .html); the last table gives the median of the runs of each figure with
# its ratios to the same runs' baselines. About 3 minutes on the standard
# 2-vCPU machine with 3 runs (one run of the five figures takes under a
# minute).
# Usage: bench/figures.sh [extra iggo bench flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${IGGO_BENCH_OUT:-bench/results}
bin=$(mktemp -d)/iggo
data=$(mktemp -d)
disk=$(mktemp -d)
port=${IGGO_BENCH_PORT:-8391}
go build -o "$bin" ./cmd/iggo
IGGY_QUIC_ADDRESS=127.0.0.1:0 IGGY_WEBSOCKET_ADDRESS=127.0.0.1:0 IGGY_HTTP_ADDRESS=127.0.0.1:0 "$bin" server --fresh --data-path "$data" --tcp-address "127.0.0.1:$port" --log-level warn &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$data" "$disk" "$(dirname "$bin")"' EXIT
for _ in $(seq 50); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
mkdir -p "$out"
start=$(date +%s)
names=()
for run in $(seq "${IGGO_BENCH_RUNS:-3}"); do
  while read -r name args; do
    echo "== iggo bench $args --name ${name}_run$run"
    # shellcheck disable=SC2086 # $args is a list of flags
    "$bin" bench $args --addr "127.0.0.1:$port" --disk-baseline-dir "$disk" --no-progress \
      --output-dir "$out" --name "${name}_run$run" "$@" < /dev/null
    names+=("$out/${name}_run$run.json")
    echo
  done <<'RUNS'
pp1 pinned-producer --producers 1
pp1-fsync pinned-producer --producers 1 --enforce-fsync
pc1 pinned-consumer --consumers 1
pp2 pinned-producer --producers 2
rate5k pinned-producer --producers 1 --messages-per-batch 1 --message-batches 25000 --rate-limit 5MB
RUNS
done
"$bin" bench compare "${names[@]}"
echo
"$bin" bench compare --medians "${names[@]}"
echo "took $(( $(date +%s) - start )) s"
