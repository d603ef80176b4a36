#!/usr/bin/env bash
# The cost of forwarding (docs/CLUSTER.md §7.3): builds iggo and the itest
# benchmarks, starts a local 3-node cluster (`iggo cluster start --fresh`,
# replica 0 leads every partition), and runs BenchmarkForwardHop
# (internal/itest/bench_forward_test.go) against it: the same requests,
# one at a time on one connection, sent to the leader and to a follower
# that forwards them to the leader (IGGO_BENCH_RUNS rounds, default 3,
# leader and follower alternating):
#   send-1x100B       one 100-byte message per request (ns/op: round trip)
#   send-1000x1KiB    1000 x 1 KiB per request
#   poll-1000x1KiB    polls of 1000 x 1 KiB
# cpu-us/op is the CPU of the three node processes per request. Prints
# the Go benchmark lines, then the medians per figure. About 2 minutes on
# the standard 2-vCPU machine.
# Usage: bench/forward.sh [extra test flags, e.g. -test.benchtime 5s]
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
base=${IGGO_BENCH_CLUSTER_PORT:-8591}
go build -o "$tmp/iggo" ./cmd/iggo
go test -c -o "$tmp/itest.test" ./internal/itest
"$tmp/iggo" cluster start --fresh --dir "$tmp/cluster" --base-port "$base" >"$tmp/cluster.out" 2>&1 &
cluster=$!
trap 'kill "$cluster" 2>/dev/null; wait "$cluster" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 600); do grep -q '^connect:' "$tmp/cluster.out" && break; kill -0 "$cluster" 2>/dev/null || break; sleep 0.1; done
cat "$tmp/cluster.out"
grep -q '^connect:' "$tmp/cluster.out" || { echo "the cluster did not start" >&2; exit 1; }
status=$("$tmp/iggo" cluster status --dir "$tmp/cluster" -o json)
leader=$(jq -r '.nodes[] | select(.role == "leader") | .address' <<<"$status")
follower=$(jq -r '[.nodes[] | select(.role == "follower") | .address][0]' <<<"$status")
[ -n "$leader" ] && [ -n "$follower" ] || { echo "no leader or follower" >&2; exit 1; }
pids=$(cat "$tmp"/cluster/node*/server.pid | paste -sd,)
echo "leader $leader, follower $follower, node processes $pids"
(cd "$tmp" && IGGO_FORWARD_LEADER=$leader IGGO_FORWARD_FOLLOWER=$follower IGGO_FORWARD_PIDS=$pids \
  IGGO_FORWARD_ROUNDS=${IGGO_BENCH_RUNS:-3} ./itest.test -test.run '^$' -test.bench BenchmarkForwardHop \
  -test.benchtime 2s "$@") | tee "$tmp/out.txt"
echo
# Medians per figure: ns/op, MB/s, cpu-µs/op.
grep '^BenchmarkForwardHop/' "$tmp/out.txt" | sed -E 's/#[0-9]+//; s/-[0-9]+ / /' | awk '
  { name = $1; sub(/^BenchmarkForwardHop\//, "", name)
    for (i = 2; i < NF; i++) {
      if ($(i+1) == "ns/op") ns[name] = ns[name] " " $i
      if ($(i+1) == "MB/s") mb[name] = mb[name] " " $i
      if ($(i+1) == "cpu-µs/op") cpu[name] = cpu[name] " " $i
    }
    if (!(name in seen)) { seen[name] = 1; order[++n] = name } }
  function median(s,   a, k, i, j, t) {
    k = split(s, a, " "); if (k == 0) return "-"
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return a[int((k + 1) / 2)] }
  END { printf "%-28s %12s %10s %12s\n", "median", "us/op", "MB/s", "cpu-us/op"
    for (i = 1; i <= n; i++) printf "%-28s %12.1f %10s %12s\n", order[i], median(ns[order[i]]) / 1000, median(mb[order[i]]), median(cpu[order[i]]) }'
