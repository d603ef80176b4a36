#!/usr/bin/env bash
# A/B of two Iggo revisions in one sitting: builds iggo at OLD and at NEW
# (default: the working tree), then runs IGGO_AB_ROUNDS rounds (default 3),
# each round starting every server afresh and alternating the two builds
# (A B, then B A, ...), with the NEW build's `iggo bench` as the one load
# generator and 1000 x 1000-byte messages per batch:
#   1 node     pp1 (pinned-producer, 1 producer, 500 batches) and pc1
#              (pinned-consumer, 1 consumer, 500 batches)
#   3 nodes    (`iggo cluster start`, against the leader) pp1 (300 batches)
#              and rate5k (1 producer, 1 message per request, 5000
#              requests/s, 10 s)
# For each figure it prints the median of each build, the ratio NEW/OLD,
# and the CPU seconds the server processes (every node of a cluster) spent
# per GB sent, read from /proc. Results go to IGGO_BENCH_OUT (default a
# temporary directory). About 5 minutes with 3 rounds on the standard
# 2-vCPU machine.
# Usage: bench/ab.sh OLD_REV [NEW_REV]
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/ab.sh OLD_REV [NEW_REV]}
new=${2:-}
tmp=$(mktemp -d)
out=${IGGO_BENCH_OUT:-$tmp/results}
rounds=${IGGO_AB_ROUNDS:-3}
single=${IGGO_BENCH_PORT:-8391}
base=${IGGO_BENCH_CLUSTER_PORT:-8491}
mkdir -p "$out"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  git worktree remove --force "$tmp/src-A" 2>/dev/null || true
  [ -z "$new" ] || git worktree remove --force "$tmp/src-B" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

build() { # build LABEL REV: $tmp/iggo-LABEL from REV (empty: the working tree)
  if [ -z "$2" ]; then
    go build -o "$tmp/iggo-$1" ./cmd/iggo
  else
    git worktree add --detach "$tmp/src-$1" "$2" >/dev/null 2>&1
    (cd "$tmp/src-$1" && go build -o "$tmp/iggo-$1" ./cmd/iggo)
  fi
  echo "build $1: ${2:-working tree} ($(git rev-parse --short "${2:-HEAD}"))"
}
build A "$old"
build B "$new"
bench=$tmp/iggo-B

# cpu PID...: the CPU seconds (user + system) the processes have used.
cpu() {
  local tick total=0 p
  tick=$(getconf CLK_TCK)
  for p in "$@"; do
    total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  awk -v t="$total" -v k="$tick" 'BEGIN {printf "%.3f", t / k}'
}

# run FIGURE BUILD ROUND ADDR PIDS -- ARGS: one iggo bench run, and its
# server CPU per GB in $out/FIGURE-BUILD_ROUND.cpu
run() {
  local fig=$1 b=$2 r=$3 addr=$4 pids_=$5
  shift 6
  local before after
  # shellcheck disable=SC2086 # the PID list
  before=$(cpu $pids_)
  "$bench" bench "$@" --addr "$addr" --baseline 0 --disk-baseline 0 --no-progress \
    --output-dir "$out" --name "$fig-${b}_$r" </dev/null >/dev/null
  # shellcheck disable=SC2086
  after=$(cpu $pids_)
  jq -r --arg c "$(awk -v a="$before" -v b="$after" 'BEGIN {print b - a}')" \
    '(.groups[0].mb_per_second) as $mb | (.seconds) as $s | ($c | tonumber) / (($mb * $s) / 1000) | tostring' \
    "$out/$fig-${b}_$r.json" >"$out/$fig-${b}_$r.cpu"
}

single_round() { # single_round BUILD ROUND
  local b=$1 r=$2 data=$tmp/data-$1-$2 pid
  IGGY_QUIC_ENABLED=false IGGY_WEBSOCKET_ENABLED=false IGGY_HTTP_ENABLED=false \
    "$tmp/iggo-$b" server --fresh --data-path "$data" --tcp-address "127.0.0.1:$single" --log-level warn &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$single") 2>/dev/null && break; sleep 0.1; done
  run pp1 "$b" "$r" "127.0.0.1:$single" "$pid" -- pinned-producer --producers 1 --message-batches 500
  run pc1 "$b" "$r" "127.0.0.1:$single" "$pid" -- pinned-consumer --consumers 1 --message-batches 500
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  rm -rf "$data"
}

cluster_round() { # cluster_round BUILD ROUND
  local b=$1 r=$2 dir=$tmp/cluster-$1-$2 pid nodes leader
  "$tmp/iggo-$b" cluster start --fresh --dir "$dir" --base-port "$base" >"$tmp/cluster.out" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 600); do grep -q '^connect:' "$tmp/cluster.out" && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  grep -q '^connect:' "$tmp/cluster.out" || { cat "$tmp/cluster.out" >&2; echo "the cluster did not start" >&2; exit 1; }
  leader=$("$tmp/iggo-$b" cluster status --dir "$dir" -o json | jq -r '.nodes[] | select(.role == "leader") | .address')
  nodes=$(pgrep -P "$pid" | tr '\n' ' ')
  run pp1c "$b" "$r" "$leader" "$nodes" -- pinned-producer --producers 1 --message-batches 300
  run rate5k "$b" "$r" "$leader" "$nodes" -- pinned-producer --producers 1 --messages-per-batch 1 \
    --message-batches 50000 --rate-limit 5MB
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
}

start=$(date +%s)
for r in $(seq "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then order="A B"; else order="B A"; fi
  for b in $order; do
    echo "round $r: build $b"
    single_round "$b" "$r"
    cluster_round "$b" "$r"
  done
done

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
printf '\n%-8s %-26s %12s %12s %8s\n' figure measure "A (old)" "B (new)" "B/A"
for fig in pp1 pc1 pp1c rate5k; do
  for m in mb_per_second messages_per_second latency.p99_ms cpu_s_per_gb; do
    case "$fig/$m" in
    rate5k/mb_per_second | pp1/messages_per_second | pc1/messages_per_second | pp1c/messages_per_second | pc1/latency.p99_ms | pc1/cpu_s_per_gb) continue ;;
    esac
    vals=()
    for b in A B; do
      if [ "$m" = cpu_s_per_gb ]; then
        vals+=("$(cat "$out/$fig-${b}"_*.cpu | median)")
      else
        vals+=("$(for f in "$out/$fig-${b}"_*.json; do jq ".groups[0].$m" "$f"; done | median)")
      fi
    done
    awk -v f="$fig" -v m="$m" -v a="${vals[0]}" -v b="${vals[1]}" \
      'BEGIN {printf "%-8s %-26s %12.3f %12.3f %8.2f\n", f, m, a, b, (a > 0 ? b / a : 0)}'
  done
done
echo "took $(( $(date +%s) - start )) s; pp1c is pp1 against a 3-node cluster's leader"
