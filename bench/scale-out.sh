#!/usr/bin/env bash
# Scale-out figures: aggregate produce throughput of local clusters whose
# nodes each get the same CPU quota (a cgroup v1 cpu.cfs_quota_us per
# node process, so the machine's two vCPUs do not hide the node count),
# all on loopback, rounds alternating, medians:
#   3spread   3 nodes, replication factor 3, partition_leaders = spread
#   3meta     3 nodes, replication factor 3, partition_leaders =
#             metadata_leader (every partition led by the metadata leader)
#   6spread   6 nodes, replication factor 3, spread
#   3onenode  as 3spread, but the client sends everything through one node
#             (--partition-routing=false: what an official SDK does; the
#             node forwards to each partition's leader)
# Each run: `iggo bench pinned-producer` with IGGO_SCALE_PRODUCERS
# producers (default 12: one partition each, placed and led by the
# cluster), IGGO_SCALE_SIZE-byte messages (default 1000) in batches of
# IGGO_SCALE_BATCH (default 100), for IGGO_SCALE_SECONDS (default 10)
# after a 3 s warm-up. Prints every run, the medians and the ratios
# 3spread/3meta, 6spread/3spread and 3spread/3onenode. Needs root (it
# creates cgroups under /sys/fs/cgroup/cpu) and jq.
# Usage: sudo bench/scale-out.sh   (IGGO_SCALE_QUOTA: CPU per node in
#        percent of one core, default 25, enforced every
#        IGGO_SCALE_PERIOD_US, default 10000: a short period keeps a
#        throttled node from stalling for most of 100 ms; IGGO_SCALE_RUNS,
#        default 3;
#        IGGO_SCALE_CONFIGS to pick configurations, e.g. "3spread 3meta")
set -euo pipefail
cd "$(dirname "$0")/.."
quota=${IGGO_SCALE_QUOTA:-25}
period=${IGGO_SCALE_PERIOD_US:-10000}
runs=${IGGO_SCALE_RUNS:-3}
producers=${IGGO_SCALE_PRODUCERS:-12}
size=${IGGO_SCALE_SIZE:-1000}
batch=${IGGO_SCALE_BATCH:-100}
seconds=${IGGO_SCALE_SECONDS:-10}
base=${IGGO_SCALE_PORT:-8691}
configs=${IGGO_SCALE_CONFIGS:-3spread 3meta 6spread 3onenode}
out=${IGGO_BENCH_OUT:-bench/results}
cg=/sys/fs/cgroup/cpu
[ -w "$cg" ] || { echo "needs a writable cgroup v1 cpu hierarchy at $cg (run as root)" >&2; exit 2; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 2; }
tmp=$(mktemp -d)
bin=$tmp/iggo
launcher=
groups=()
go build -o "$bin" ./cmd/iggo
mkdir -p "$out"

# stop_cluster stops the launcher (it stops its nodes) and removes the
# nodes' cgroups.
stop_cluster() {
  if [ -n "$launcher" ]; then
    kill -INT "$launcher" 2>/dev/null || true
    for _ in $(seq 300); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$launcher" 2>/dev/null || true
    wait "$launcher" 2>/dev/null || true
    launcher=
  fi
  local g
  for g in "${groups[@]}"; do rmdir "$g" 2>/dev/null || true; done
  groups=()
}
trap 'stop_cluster; rm -rf "$tmp"' EXIT

# start_cluster N LEADERS starts N nodes and puts each in its own cgroup
# limited to $quota % of one CPU; sets addrs.
start_cluster() {
  local n=$1 leaders=$2 i pid g
  rm -rf "$tmp/c"
  : >"$tmp/launcher.out"
  IGGY_CLUSTER_PARTITION_LEADERS=$leaders GOMAXPROCS=1 \
    "$bin" cluster start --dir "$tmp/c" --nodes "$n" --base-port "$base" >>"$tmp/launcher.out" 2>&1 &
  launcher=$!
  for _ in $(seq 600); do
    grep -q '^connect:' "$tmp/launcher.out" && break
    kill -0 "$launcher" 2>/dev/null || break
    sleep 0.1
  done
  grep -q '^connect:' "$tmp/launcher.out" || { cat "$tmp/launcher.out"; echo "the cluster did not start" >&2; exit 1; }
  i=0
  while read -r pid; do
    g=$cg/iggo-scale-$$-$i
    mkdir -p "$g"
    echo "$period" >"$g/cpu.cfs_period_us"
    echo $((quota * period / 100)) >"$g/cpu.cfs_quota_us"
    echo "$pid" >"$g/cgroup.procs"
    groups+=("$g")
    i=$((i + 1))
  done < <(sed -n 's/^started node[0-9]* (pid \([0-9]*\)).*/\1/p' "$tmp/launcher.out")
  mapfile -t addrs < <("$bin" cluster status --dir "$tmp/c" -o json | jq -r '.nodes[].address')
}

declare -A results
for run in $(seq "$runs"); do
  for conf in $configs; do
    case $conf in
      3spread) n=3 leaders=spread routing=true ;;
      3meta) n=3 leaders=metadata_leader routing=true ;;
      6spread) n=6 leaders=spread routing=true ;;
      3onenode) n=3 leaders=spread routing=false ;;
      *) echo "unknown configuration $conf" >&2; exit 2 ;;
    esac
    start_cluster "$n" "$leaders"
    name=scaleout-$conf-run$run
    "$bin" bench pinned-producer --addr "$(IFS=,; echo "${addrs[*]}")" --producers "$producers" \
      --message-size "$size" --messages-per-batch "$batch" --duration "${seconds}s" --warmup-time 3s \
      --partition-routing="$routing" --baseline 0 --disk-baseline 0 --no-progress \
      --output-dir "$out" --name "$name" </dev/null >"$tmp/$name.txt"
    mbs=$(jq '[.groups[] | select(.kind == "producer") | .mb_per_second] | add' "$out/$name.json")
    p99=$(jq '[.groups[] | select(.kind == "producer") | .latency.p99_ms] | max' "$out/$name.json")
    printf '%-9s run %d: %8.1f MB/s, p99 %6.2f ms (%d nodes, %s, routing %s, %d%% CPU each)\n' \
      "$conf" "$run" "$mbs" "$p99" "$n" "$leaders" "$routing" "$quota"
    results[$conf]="${results[$conf]:-} $mbs"
    stop_cluster
  done
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
declare -A med
echo
for conf in $configs; do
  med[$conf]=$(echo "${results[$conf]}" | median)
  printf 'median %-9s %8.1f MB/s\n' "$conf" "${med[$conf]}"
done
ratio() { [ -n "${med[$1]:-}" ] && [ -n "${med[$2]:-}" ] && awk -v a="${med[$1]}" -v b="${med[$2]}" -v l="$3" 'BEGIN {printf "%s: %.2f\n", l, a / b}' || true; }
ratio 3spread 3meta "3 nodes, spread / metadata_leader"
ratio 6spread 3spread "6 nodes / 3 nodes (spread)"
ratio 3spread 3onenode "our SDK routing / through one node"
