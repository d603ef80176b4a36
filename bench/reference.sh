#!/usr/bin/env bash
# Iggo and the reference server (Apache Iggy, release builds in
# ../shared/reference) side by side in one sitting, on loopback:
#   1 node    pp1      pinned-producer, 1 producer, 1000 batches of 1000 x 1000 B
#             pc1      pinned-consumer, 1 consumer, reading what pp1 wrote
#             pp4      pinned-producer, 4 producers on 4 streams, 250 batches each
#             pp1sync  pp1 with --enforce-fsync, 300 batches
#   3 nodes   cpp1     pinned-producer, 1 producer, 1000 batches, to the leader
#             cpc1     pinned-consumer, 1 consumer, from the leader
#             crate5k  1 message per request, 5000 requests/s asked (10 s)
# each with the reference's `iggy-bench` as the load generator, and cpp1 and
# crate5k again with `iggo bench` (cpp1-ib, crate5k-ib). Every round starts
# each server afresh, Iggo first in odd rounds and the reference first in
# even ones; IGGO_REF_ROUNDS rounds (default 3). For each figure it prints
# the median MB/s, messages/s, p99 batch latency and server CPU seconds per
# GB of payload (user + system time of the server processes, every node of
# a cluster, from /proc, over the run), and Iggo / reference.
# Before each server starts the script waits IGGO_REF_SETTLE seconds
# (default 6): this machine returns freed memory to its hypervisor after
# about 2 s, and memory touched again after that costs far more
# (bench/README.md, "Figures on this machine"), so without the wait the
# server started right after the other one's data was deleted would write
# into warm memory and the other into cold.
# Raw results go to IGGO_BENCH_OUT (default a temporary directory).
# About 10 minutes with 3 rounds on the standard 2-vCPU machine.
# Needs: gunzip, jq, libhwloc (the reference server links it:
# `apt-get install -y libhwloc15`).
# Usage: bench/reference.sh [figure...]   (default: every figure)
set -euo pipefail
cd "$(dirname "$0")/.."
refsrc=${IGGO_REF_DIR:-../shared/reference}
rounds=${IGGO_REF_ROUNDS:-3}
tmp=$(mktemp -d)
out=${IGGO_BENCH_OUT:-$tmp/results}
iggo_port=${IGGO_BENCH_PORT:-8391}
ref_port=${IGGO_REF_PORT:-28090}
iggo_cport=${IGGO_BENCH_CLUSTER_PORT:-8491}
ref_cport=${IGGO_REF_CLUSTER_PORT:-28190}
settle=${IGGO_REF_SETTLE:-6}
figures=${*:-pp1 pc1 pp4 pp1sync cpp1 cpc1 crate5k cpp1-ib crate5k-ib}
mkdir -p "$out"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp/data"
  [ -n "${IGGO_BENCH_OUT:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

gunzip -c "$refsrc/iggy-server.gz" >"$tmp/iggy-server"
gunzip -c "$refsrc/iggy-bench.gz" >"$tmp/iggy-bench"
chmod +x "$tmp/iggy-server" "$tmp/iggy-bench"
go build -o "$tmp/iggo" ./cmd/iggo
echo "iggo $(git rev-parse --short HEAD)$(git diff --quiet || echo '+changes'); reference: $("$tmp/iggy-server" --version 2>/dev/null | head -1)"

wants() { [[ " $figures " == *" $1 "* ]]; }
wait_port() { for _ in $(seq 200); do (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

# cpu PID...: user + system CPU seconds of the processes so far.
cpu() {
  local total=0 p
  for p in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
  awk -v t="$total" -v k="$(getconf CLK_TCK)" 'BEGIN {printf "%.3f", t / k}'
}

# Each result file holds one line: MB/s, messages/s, p99 ms, CPU s/GB.

# ib FIG SYS ROUND ADDR "PIDS" ARGS...: one iggy-bench run.
ib() {
  local fig=$1 sys=$2 r=$3 addr=$4 pids_=$5 line before after
  shift 5
  # shellcheck disable=SC2086 # the PID list
  before=$(cpu $pids_)
  line=$(timeout 300 "$tmp/iggy-bench" -u iggy -p iggy "$@" tcp --server-address "$addr" 2>&1 |
    grep -E '(Producers|Consumers) Results' | head -1 || true)
  # shellcheck disable=SC2086
  after=$(cpu $pids_)
  if [ -z "$line" ]; then
    echo "  $fig $sys: iggy-bench gave no result" >&2
    return 0
  fi
  echo "$line" | awk -v c="$(awk -v a="$before" -v b="$after" 'BEGIN {print b - a}')" '{
    match($0, /Total throughput: [0-9.]+ MB\/s/); mb = substr($0, RSTART + 18, RLENGTH - 23)
    match($0, /[0-9.]+ messages\/s/); ms = substr($0, RSTART, RLENGTH - 11)
    match($0, /p99 latency: [0-9.]+ ms/); p99 = substr($0, RSTART + 13, RLENGTH - 16)
    match($0, /total time: [0-9.]+ s/); secs = substr($0, RSTART + 12, RLENGTH - 14)
    gb = mb * secs / 1000
    printf "%s %s %s %.3f\n", mb, ms, p99, (gb > 0 ? c / gb : 0)
  }' >"$out/$fig-${sys}_$r.txt"
}

# gb FIG SYS ROUND ADDR "PIDS" ARGS...: one `iggo bench` run.
gb() {
  local fig=$1 sys=$2 r=$3 addr=$4 pids_=$5 before after
  shift 5
  # shellcheck disable=SC2086
  before=$(cpu $pids_)
  "$tmp/iggo" bench "$@" --addr "$addr" --partition-routing=false --baseline 0 --disk-baseline 0 \
    --no-progress --output-dir "$out" --name "$fig-${sys}_$r" </dev/null >/dev/null || {
    echo "  $fig $sys: iggo bench failed" >&2
    return 0
  }
  # shellcheck disable=SC2086
  after=$(cpu $pids_)
  jq -r --arg c "$(awk -v a="$before" -v b="$after" 'BEGIN {print b - a}')" \
    '.groups[0] as $g | ($g.mb_per_second * .seconds / 1000) as $gb |
     "\($g.mb_per_second) \($g.messages_per_second) \($g.latency.p99_ms) \(if $gb > 0 then ($c | tonumber) / $gb else 0 end)"' \
    "$out/$fig-${sys}_$r.json" >"$out/$fig-${sys}_$r.txt"
}

pp1=(-b 1000 pinned-producer --producers 1 --streams 1)
pc1=(-b 1000 pinned-consumer --consumers 1 --streams 1)
pp4=(-b 250 pinned-producer --producers 4 --streams 4)
pp1sync=(-b 300 --enforce-fsync pinned-producer --producers 1 --streams 1)
rate5k=(-P 1 -b 50000 -r 5MB pinned-producer --producers 1 --streams 1)

single() { # single SYS ROUND
  local sys=$1 r=$2 pid addr
  rm -rf "$tmp/data"
  sleep "$settle"
  if [ "$sys" = iggo ]; then
    addr=127.0.0.1:$iggo_port
    IGGY_QUIC_ENABLED=false IGGY_WEBSOCKET_ENABLED=false IGGY_HTTP_ENABLED=false \
      "$tmp/iggo" server --fresh --data-path "$tmp/data" --tcp-address "$addr" --log-level warn &
  else
    addr=127.0.0.1:$ref_port
    IGGY_CONFIG_PATH=$refsrc/server-config.toml IGGY_SYSTEM_PATH=$tmp/data IGGY_TCP_ADDRESS=$addr \
      IGGY_HTTP_ENABLED=false IGGY_QUIC_ENABLED=false IGGY_WEBSOCKET_ENABLED=false \
      IGGY_ROOT_USERNAME=iggy IGGY_ROOT_PASSWORD=iggy "$tmp/iggy-server" >"$tmp/ref-single.log" 2>&1 &
  fi
  pid=$!
  pids+=("$pid")
  wait_port "${addr##*:}" || { echo "$sys did not start" >&2; exit 1; }
  sleep 1
  if wants pp1 || wants pc1; then ib pp1 "$sys" "$r" "$addr" "$pid" "${pp1[@]}"; fi
  if wants pc1; then ib pc1 "$sys" "$r" "$addr" "$pid" --reuse-streams "${pc1[@]}"; fi
  if wants pp4; then ib pp4 "$sys" "$r" "$addr" "$pid" "${pp4[@]}"; fi
  if wants pp1sync; then ib pp1sync "$sys" "$r" "$addr" "$pid" "${pp1sync[@]}"; fi
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}

ref_node() { # ref_node I: start node I of the reference cluster in the background
  local i=$1
  env IGGY_CONFIG_PATH="$refsrc/server-config.toml" IGGY_SYSTEM_PATH="$tmp/data/node$i" \
    IGGY_HTTP_ENABLED=false IGGY_QUIC_ENABLED=false IGGY_WEBSOCKET_ENABLED=false \
    IGGY_ROOT_USERNAME=iggy IGGY_ROOT_PASSWORD=iggy IGGY_CLUSTER_ENABLED=true \
    IGGY_TCP_ADDRESS="127.0.0.1:$((ref_cport + i))" \
    IGGY_CLUSTER_NODES_0_NAME=n0 IGGY_CLUSTER_NODES_0_IP=127.0.0.1 IGGY_CLUSTER_NODES_0_REPLICA_ID=0 \
    IGGY_CLUSTER_NODES_0_PORTS_TCP="$ref_cport" IGGY_CLUSTER_NODES_0_PORTS_TCP_REPLICA=$((ref_cport + 10)) \
    IGGY_CLUSTER_NODES_1_NAME=n1 IGGY_CLUSTER_NODES_1_IP=127.0.0.1 IGGY_CLUSTER_NODES_1_REPLICA_ID=1 \
    IGGY_CLUSTER_NODES_1_PORTS_TCP=$((ref_cport + 1)) IGGY_CLUSTER_NODES_1_PORTS_TCP_REPLICA=$((ref_cport + 11)) \
    IGGY_CLUSTER_NODES_2_NAME=n2 IGGY_CLUSTER_NODES_2_IP=127.0.0.1 IGGY_CLUSTER_NODES_2_REPLICA_ID=2 \
    IGGY_CLUSTER_NODES_2_PORTS_TCP=$((ref_cport + 2)) IGGY_CLUSTER_NODES_2_PORTS_TCP_REPLICA=$((ref_cport + 12)) \
    "$tmp/iggy-server" --replica-id "$i" >"$tmp/ref-node$i.log" 2>&1 &
  pids+=("$!")
}

cluster() { # cluster SYS ROUND
  local sys=$1 r=$2 addr nodes i parent=
  rm -rf "$tmp/data"
  sleep "$settle"
  if [ "$sys" = iggo ]; then
    "$tmp/iggo" cluster start --fresh --dir "$tmp/data" --base-port "$iggo_cport" >"$tmp/cluster.out" 2>&1 &
    parent=$!
    pids+=("$parent")
    for _ in $(seq 600); do grep -q '^connect:' "$tmp/cluster.out" && break; sleep 0.1; done
    grep -q '^connect:' "$tmp/cluster.out" || { cat "$tmp/cluster.out" >&2; exit 1; }
    addr=$("$tmp/iggo" cluster status --dir "$tmp/data" -o json | jq -r '.nodes[] | select(.role == "leader") | .address')
    nodes=$(pgrep -P "$parent" | tr '\n' ' ')
    sleep 1
  else
    addr=127.0.0.1:$ref_cport
    # Replica 0 is the first primary (view 0) and dials the others: start
    # it last, once they listen, so no backup times out waiting for it; a
    # cluster that changed view while forming is started again.
    for attempt in 1 2 3; do
      nodes=
      rm -rf "$tmp/data"
      for i in 2 1 0; do
        ref_node "$i"
        nodes="$nodes $!"
        wait_port $((ref_cport + 10 + i)) || { echo "reference node $i did not start" >&2; exit 1; }
      done
      wait_port "$ref_cport" || { echo "the reference cluster did not start" >&2; exit 1; }
      sleep 9 # its replica mesh reconnects every 5 s (../shared/reference/README.md)
      grep -q ViewChangeStarted "$tmp"/ref-node*.log || break
      echo "  the reference cluster changed view while forming; starting it again (attempt $attempt)" >&2
      # shellcheck disable=SC2086
      kill $nodes
      # shellcheck disable=SC2086
      wait $nodes 2>/dev/null || true
    done
  fi
  if wants cpp1 || wants cpc1; then ib cpp1 "$sys" "$r" "$addr" "$nodes" "${pp1[@]}"; fi
  if wants cpc1; then ib cpc1 "$sys" "$r" "$addr" "$nodes" --reuse-streams "${pc1[@]}"; fi
  if wants crate5k; then ib crate5k "$sys" "$r" "$addr" "$nodes" "${rate5k[@]}"; fi
  if wants cpp1-ib; then gb cpp1-ib "$sys" "$r" "$addr" "$nodes" pinned-producer --producers 1 --message-batches 1000; fi
  if wants crate5k-ib; then
    gb crate5k-ib "$sys" "$r" "$addr" "$nodes" pinned-producer --producers 1 --messages-per-batch 1 \
      --message-batches 50000 --rate-limit 5MB
  fi
  if [ -n "$parent" ]; then
    kill "$parent"
    wait "$parent" 2>/dev/null || true
  else
    # shellcheck disable=SC2086
    kill $nodes
    # shellcheck disable=SC2086
    wait $nodes 2>/dev/null || true
  fi
}

start=$(date +%s)
for r in $(seq "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then order="iggo ref"; else order="ref iggo"; fi
  for sys in $order; do
    echo "round $r: $sys, 1-min load $(cut -d' ' -f1 /proc/loadavg)"
    single "$sys" "$r"
    cluster "$sys" "$r"
  done
done

median() { sort -g | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]; else print 0}'; }
printf '\n%-11s %-12s %10s %10s %8s\n' figure measure iggo reference ratio
for fig in $figures; do
  col=0
  for m in MB/s msg/s p99_ms cpu_s/GB; do
    col=$((col + 1))
    case "$fig/$m" in
    crate5k*/MB/s | pp*/msg/s | pc*/msg/s | cpp*/msg/s | cpc*/msg/s | *pc1/p99_ms | crate5k*/cpu_s/GB) continue ;;
    esac
    vals=()
    for sys in iggo ref; do
      vals+=("$(cat "$out/$fig-${sys}"_*.txt 2>/dev/null | awk -v c=$col '{print $c}' | median)")
    done
    awk -v f="$fig" -v m="$m" -v a="${vals[0]}" -v b="${vals[1]}" \
      'BEGIN {printf "%-11s %-12s %10.3f %10.3f %8.2f\n", f, m, a, b, (b > 0 ? a / b : 0)}'
  done
done
echo "took $(($(date +%s) - start)) s; medians of $rounds rounds; raw results in $out"
