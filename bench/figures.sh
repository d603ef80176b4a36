#!/usr/bin/env bash
# Reproduces the figures of bench/README.md: builds iggo, starts a broker as
# its own process on a fresh data directory, runs pinned-producer,
# pinned-consumer and end-to-end-producing-consumer with 1 KB messages,
# each without and with enforce_fsync (every run measures the loopback TCP
# baseline first), writes bench/results/*.json and *.html, and stops the
# broker. IGGO_BENCH_RUNS (default 3) repeats the set; the machine is shared,
# so compare the runs (iggo bench compare bench/results/*.json).
# Usage: bench/figures.sh [extra iggo bench flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/results
bin=$(mktemp -d)/iggo
data=$(mktemp -d)
port=${IGGO_BENCH_PORT:-8391}
go build -o "$bin" ./cmd/iggo
"$bin" server --fresh --data-path "$data" --tcp-address "127.0.0.1:$port" --log-level warn &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$data" "$(dirname "$bin")"' EXIT
for _ in $(seq 50); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
mkdir -p "$out"
for run in $(seq "${IGGO_BENCH_RUNS:-3}"); do
  for scenario in pinned-producer pinned-consumer end-to-end-producing-consumer; do
    for fsync in "" --enforce-fsync; do
      name=${scenario}_$([ -n "$fsync" ] && echo fsync || echo nofsync)_run$run
      echo "== iggo bench $scenario --addr 127.0.0.1:$port $fsync --output-dir $out --name $name $*"
      "$bin" bench "$scenario" --addr "127.0.0.1:$port" $fsync --output-dir "$out" --name "$name" "$@"
      echo
    done
  done
done
"$bin" bench compare "$out"/*.json
