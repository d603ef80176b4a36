#!/usr/bin/env bash
# Bounded soak: mixed produce and consume with retention by size, on an
# embedded broker (so the Go heap and goroutines can be sampled along with
# RSS, threads and open files). Two producers and two consumers, pinned
# in pairs, at a fixed total rate, on topics of 16 MiB segments limited
# to 128 MiB, with retention every 10 s; the broker's process is sampled
# every 10 s. Writes bench/results/soak.json (the samples are under
# "resources") and soak.html (charted under "Broker process over time").
# Usage: bench/soak.sh   (IGGO_SOAK_DURATION, default 30m;
#        IGGO_SOAK_RATE, default "40 MB"; extra arguments go to iggo bench)
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/results
bin=$(mktemp -d)/iggo
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/iggo
mkdir -p "$out"
"$bin" bench pinned-producer-and-consumer --producers 2 --consumers 2 \
  --duration "${IGGO_SOAK_DURATION:-30m}" --rate-limit "${IGGO_SOAK_RATE:-40 MB}" \
  --segment-size "16 MiB" --max-topic-size "128 MiB" --retention-interval 10s \
  --resource-sampling 10s --sampling-time 1s --baseline 0 --disk-baseline 0 \
  --output-dir "$out" --name soak "$@"
