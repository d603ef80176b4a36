#!/usr/bin/env bash
# Cluster figures: builds iggo, starts a single node (`iggo server --fresh`)
# and a local 3-node cluster (`iggo cluster start --fresh`, replica 0 leads
# a fresh cluster), all on loopback, and runs, IGGO_BENCH_RUNS times
# (default 3) interleaved, against the single node and against the
# cluster's leader:
#   pp1     pinned-producer, 1 producer, IGGO_BENCH_BATCHES (default 300)
#           batches of 1000 x 1000-byte messages
#   rate5k  1 producer, 1 message per request, 5000 requests/s (10 s)
#   rate5k4 4 producers, 1 message per request, 5000 requests/s in all:
#           one producer has one request in flight, so when one ack takes
#           longer than 200 us it cannot reach 5000/s alone
# then prints the median 3-node/1-node throughput ratio of pp1, the rate
# reached and the ack p99 of rate5k and rate5k4 on both, and finally
# measures failover with real processes under producer load
# (IGGO_BENCH_FAILOVERS kills of the leader, default 5; kill -> first
# acknowledged write, internal/clustertest). Results go to
# bench/results/cluster-*.json (and .html). About 7 minutes on the
# standard 2-vCPU machine.
# Usage: bench/cluster.sh [extra iggo bench flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${IGGO_BENCH_OUT:-bench/results}
tmp=$(mktemp -d)
bin=$tmp/iggo
single=${IGGO_BENCH_PORT:-8391}
base=${IGGO_BENCH_CLUSTER_PORT:-8491}
batches=${IGGO_BENCH_BATCHES:-300}
go build -o "$bin" ./cmd/iggo
IGGY_QUIC_ENABLED=false IGGY_WEBSOCKET_ENABLED=false IGGY_HTTP_ENABLED=false \
  "$bin" server --fresh --data-path "$tmp/single" --tcp-address "127.0.0.1:$single" --log-level warn &
server=$!
"$bin" cluster start --fresh --dir "$tmp/cluster" --base-port "$base" >"$tmp/cluster.out" 2>&1 &
cluster=$!
trap 'kill "$server" "$cluster" 2>/dev/null; wait "$server" "$cluster" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do (echo >"/dev/tcp/127.0.0.1/$single") 2>/dev/null && break; sleep 0.1; done
for _ in $(seq 600); do grep -q '^connect:' "$tmp/cluster.out" && break; kill -0 "$cluster" 2>/dev/null || break; sleep 0.1; done
cat "$tmp/cluster.out"
grep -q '^connect:' "$tmp/cluster.out" || { echo "the cluster did not start" >&2; exit 1; }
leader=$("$bin" cluster status --dir "$tmp/cluster" -o json | jq -r '.nodes[] | select(.role == "leader") | .address')
[ -n "$leader" ] || { echo "no cluster leader" >&2; exit 1; }
echo "single node 127.0.0.1:$single; cluster leader $leader"
mkdir -p "$out"
start=$(date +%s)
names=()
for run in $(seq "${IGGO_BENCH_RUNS:-3}"); do
  for target in 1node 3node; do
    if [ "$target" = 1node ]; then addr=127.0.0.1:$single; else addr=$leader; fi
    while read -r name args; do
      echo "== iggo bench $args --addr $addr --name cluster-${name}-${target}_run$run"
      # shellcheck disable=SC2086 # $args is a list of flags
      "$bin" bench $args --addr "$addr" --baseline 0 --disk-baseline 0 --no-progress \
        --output-dir "$out" --name "cluster-${name}-${target}_run$run" "$@" </dev/null
      names+=("$out/cluster-${name}-${target}_run$run.json")
      echo
    done <<RUNS
pp1 pinned-producer --producers 1 --message-batches $batches
rate5k pinned-producer --producers 1 --messages-per-batch 1 --message-batches 50000 --rate-limit 5MB
rate5k4 pinned-producer --producers 4 --messages-per-batch 1 --message-batches 12500 --rate-limit 5MB
RUNS
  done
done
"$bin" bench compare "${names[@]}"
echo
# median of a jq expression over the runs of one figure and target
median() {
  local fig=$1 target=$2 expr=$3
  for f in "$out"/cluster-"$fig"-"$target"_run*.json; do jq "$expr" "$f"; done | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}
pp1_1=$(median pp1 1node '.groups[0].mb_per_second')
pp1_3=$(median pp1 3node '.groups[0].mb_per_second')
awk -v a="$pp1_1" -v b="$pp1_3" 'BEGIN {
  printf "pp1 throughput (median MB/s): 1 node %.1f, 3 nodes %.1f, ratio 3/1 = %.2f\n", a, b, b / a
}'
for fig in rate5k rate5k4; do
  awk -v f="$fig" -v r1="$(median "$fig" 1node '.groups[0].messages_per_second')" -v r3="$(median "$fig" 3node '.groups[0].messages_per_second')" \
    -v p="$(median "$fig" 1node '.groups[0].latency.p99_ms')" -v q="$(median "$fig" 3node '.groups[0].latency.p99_ms')" 'BEGIN {
    printf "%-8s (medians): 1 node %.0f msg/s, ack p99 %.3f ms; 3 nodes %.0f msg/s, ack p99 %.3f ms\n", f, r1, p, r3, q
  }'
done
kill "$cluster" 2>/dev/null; wait "$cluster" 2>/dev/null || true
echo
echo "== failover: IGGO_CLUSTER_FAILOVERS=${IGGO_BENCH_FAILOVERS:-5} go test -run TestLeaderKillUnderLoad ./internal/clustertest"
IGGO_CLUSTER_FAILOVERS=${IGGO_BENCH_FAILOVERS:-5} go test -count=1 -v -run 'TestLeaderKillUnderLoad$' ./internal/clustertest |
  grep -E 'failover|history:|^(ok|FAIL|---)' || true
echo "took $(( $(date +%s) - start )) s"
