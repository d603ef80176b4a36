#!/usr/bin/env bash
# Cluster scale check: many partitions (one raft group each) on a real local
# 3-node cluster. Builds iggo, starts `iggo cluster start --fresh`, creates
# IGGO_SCALE_PARTITIONS partitions (default 10,000) against the leader as
# IGGO_SCALE_STREAMS x IGGO_SCALE_TOPICS topics (default 10 x 10), and
# measures:
#   create   wall time of the stream/topic creations
#   leaders  time after the last creation until a sample of partitions
#            (IGGO_SCALE_SAMPLE, default 20, random) accepts a send on the
#            leader and every node serves the message back (poll per node)
#   idle     per node over IGGO_SCALE_IDLE seconds (default 60) of idleness:
#            CPU % of one core (utime+stime from /proc/<pid>/stat), RSS,
#            threads, open descriptors and the data directory size
# then stops the cluster (SIGINT to the launcher), starts it again on the
# same directory and measures the time until the sample accepts a send and
# is served by every node again. Prints a table, the open file limit and
# the ERROR/WARN lines of the node logs; every partition keeps 3
# descriptors open on every node, so the open file limit bounds the
# partitions a node can hold (about limit/3). Every wait is bounded
# (IGGO_SCALE_TIMEOUT seconds, default 900, per phase).
# Usage: bench/cluster-scale.sh   (IGGO_SCALE_PORT, default 8791, is the
#        TCP port of node 0; IGGO_SCALE_KEEP=1 keeps the cluster directory)
set -euo pipefail
cd "$(dirname "$0")/.."
parts=${IGGO_SCALE_PARTITIONS:-10000}
streams=${IGGO_SCALE_STREAMS:-10}
topics=${IGGO_SCALE_TOPICS:-10}
sample=${IGGO_SCALE_SAMPLE:-20}
idle=${IGGO_SCALE_IDLE:-60}
limit=${IGGO_SCALE_TIMEOUT:-900}
base=${IGGO_SCALE_PORT:-8791}
tmp=$(mktemp -d)
bin=$tmp/iggo
dir=$tmp/c
launcher=
pids=()

# stop_cluster sends SIGINT to the launcher (it stops its nodes: SIGTERM,
# SIGKILL after 10 s) and waits at most 30 s, then kills leftover nodes.
stop_cluster() {
  [ -n "$launcher" ] || return 0
  kill -INT "$launcher" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$launcher" 2>/dev/null || true
  wait "$launcher" 2>/dev/null || true
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  launcher=
}
cleanup() {
  stop_cluster
  if [ "${IGGO_SCALE_KEEP:-0}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}'; }

# start_cluster starts the launcher with its extra flags, waits for the
# connect: line and sets launcher, pids and leader.
start_cluster() {
  : >"$tmp/launcher.out"
  "$bin" cluster start --dir "$dir" --base-port "$base" --wait "${limit}s" "$@" >>"$tmp/launcher.out" 2>&1 &
  launcher=$!
  local deadline=$((SECONDS + limit))
  until grep -q '^connect:' "$tmp/launcher.out"; do
    kill -0 "$launcher" 2>/dev/null && [ $SECONDS -lt $deadline ] || {
      cat "$tmp/launcher.out"; echo "the cluster did not start" >&2; exit 1; }
    sleep 0.1
  done
  mapfile -t pids < <(sed -n 's/^started node[0-9]* (pid \([0-9]*\)).*/\1/p' "$tmp/launcher.out")
  leader=$("$bin" cluster status --dir "$dir" -o json | jq -r '.nodes[] | select(.role == "leader") | .address')
  [ -n "$leader" ] || { echo "no cluster leader" >&2; exit 1; }
  mapfile -t addrs < <("$bin" cluster status --dir "$dir" -o json | jq -r '.nodes[].address')
}

# alive fails, naming the node, when a node process has exited.
alive() {
  local i
  for i in "${!pids[@]}"; do
    kill -0 "${pids[$i]}" 2>/dev/null || { echo "node$i (pid ${pids[$i]}) exited" >&2; return 1; }
  done
}

# wait_sample sends a distinct message to every sampled partition on the
# leader until it is accepted, then polls it back from every node; prints
# the number of sends that failed before success. Fails after limit s.
wait_sample() {
  local tag=$1 deadline=$((SECONDS + limit)) failed=0 s t p msg a got
  for i in "${!sample_s[@]}"; do
    s=${sample_s[$i]} t=${sample_t[$i]} p=${sample_p[$i]} msg="$tag-$i"
    until "$bin" --addr "$leader" --timeout 10s send "s$s" "t$t" --partition "$p" "$msg" >/dev/null 2>>"$tmp/send.err"; do
      failed=$((failed + 1))
      alive || return 1
      [ $SECONDS -lt $deadline ] || { echo "timeout: s$s/t$t/$p accepts no send" >&2; return 1; }
      sleep 0.2
    done
    for a in "${addrs[@]}"; do
      until got=$("$bin" --addr "$a" --timeout 10s poll "s$s" "t$t" --partition "$p" --last --count 1 --raw 2>>"$tmp/poll.err") &&
        [ "$got" = "$msg" ]; do
        alive || return 1
        [ $SECONDS -lt $deadline ] || { echo "timeout: $a does not serve s$s/t$t/$p" >&2; return 1; }
        sleep 0.2
      done
    done
  done
  echo "$failed"
}

cpu_ticks() { awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat"; }
rss_mb() { awk '/^VmRSS:/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }
threads() { awk '/^Threads:/ {print $2}' "/proc/$1/status"; }
fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
fd_limit() { awk '/^Max open files/ {print $4}' "/proc/$1/limits"; }

# node_partitions counts the partitions node address $1 knows.
node_partitions() {
  local n=0 c
  for s in $(seq "$streams"); do
    c=$("$bin" --addr "$1" -o json topic list "s$s" 2>/dev/null | jq '[.[].partitions_count] | add // 0' 2>/dev/null) || c=0
    n=$((n + ${c:-0}))
  done
  echo "$n"
}

# report_logs counts the ERROR/WARN lines, descriptor exhaustion and
# panics in every node log and prints the most frequent lines.
report_logs() {
  local i log pat='level=(ERROR|WARN)|"level":"(ERROR|WARN)"'
  for i in "${!pids[@]}"; do
    log=$dir/node$i/server.log
    echo "node$i: $(grep -c -E "$pat" "$log" || true) ERROR/WARN lines," \
      "$(grep -c -i 'too many open files' "$log" || true) with 'too many open files'," \
      "$(grep -c -E '^(panic|fatal error):' "$log" || true) panics"
    grep -E '^(panic|fatal error):' "$log" | head -2 | cut -c1-400 || true
    grep -E "$pat" "$log" | sed -E 's/^time=[^ ]+ //; s/(group|partition|stream|topic)=[0-9]+/\1=N/g; s#/[^ "]*/(raft|partitions)/[^ "]*#PATH#g' |
      cut -c1-240 | sort | uniq -c | sort -rn | head -5 || true
  done
  if grep -q -i 'too many open files' "$dir"/node*/server.log; then
    echo "THE NODES HIT THE OPEN FILE LIMIT (ulimit -n $(ulimit -Sn)); a partition holds 3 open on every node (segment log, raft log segment, raft commit file)"
  fi
  [ -s "$tmp/send.err" ] && { echo "send errors (distinct):"; sort "$tmp/send.err" | uniq -c | sort -rn | head -5; }
  [ -s "$tmp/poll.err" ] && { echo "poll errors (distinct):"; sort "$tmp/poll.err" | uniq -c | sort -rn | head -5; }
  return 0
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "ulimit -n: soft $(ulimit -Sn), hard $(ulimit -Hn)"
go build -o "$bin" ./cmd/iggo

# Partitions per topic: parts spread over streams x topics, the first
# topics taking one more when it does not divide.
groups=$((streams * topics))
if [ "$parts" -lt "$groups" ]; then streams=1 topics=$parts groups=$parts; fi
per=$((parts / groups)) extra=$((parts % groups))

start_cluster --fresh
cat "$tmp/launcher.out"
echo "leader $leader; nodes ${addrs[*]}; pids ${pids[*]}"

t0=$(now)
created=0 k=0 failures=0
for s in $(seq "$streams"); do
  "$bin" --addr "$leader" --timeout 60s stream create "s$s" >/dev/null 2>>"$tmp/create.err" ||
    echo "stream create s$s failed: $(tail -1 "$tmp/create.err")" >&2
  for t in $(seq "$topics"); do
    n=$per; [ $k -lt $extra ] && n=$((n + 1)); k=$((k + 1))
    if "$bin" --addr "$leader" --timeout 120s topic create "s$s" "t$t" "$n" >/dev/null 2>>"$tmp/create.err"; then
      created=$((created + n)); counts[$(( (s - 1) * topics + t ))]=$n
    else
      failures=$((failures + 1)); counts[$(( (s - 1) * topics + t ))]=0
      echo "topic create s$s/t$t ($n partitions) failed: $(tail -1 "$tmp/create.err")" >&2
    fi
  done
  echo "  $(elapsed "$t0") s: stream $s/$streams, $created partitions; fds per node: $(for p in "${pids[@]}"; do printf '%s ' "$(fds "$p")"; done)"
  alive || { report_logs; echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"; exit 1; }
done
create_s=$(elapsed "$t0")

sample_s=() sample_t=() sample_p=()
for _ in $(seq "$sample"); do
  for _ in $(seq 100); do
    s=$((RANDOM % streams + 1)) t=$((RANDOM % topics + 1))
    n=${counts[$(( (s - 1) * topics + t ))]}
    [ "$n" -gt 0 ] && break
  done
  [ "$n" -gt 0 ] || { echo "no topic was created" >&2; exit 1; }
  sample_s+=("$s") sample_t+=("$t") sample_p+=("$((RANDOM % n))")
done
t1=$(now)
retries=$(wait_sample first) || {
  echo "the sample was not served by every node" >&2; report_logs; exit 1; }
leaders_s=$(elapsed "$t1")
echo "created $created partitions in $create_s s ($failures topic creations failed); sample of $sample served by every node after $leaders_s s more ($retries failed sends)"

echo "idle for $idle s..."
declare -A cpu0
for p in "${pids[@]}"; do cpu0[$p]=$(cpu_ticks "$p"); done
sleep "$idle"
hz=$(getconf CLK_TCK)
rows=()
for i in "${!pids[@]}"; do
  p=${pids[$i]}
  if ! kill -0 "$p" 2>/dev/null; then rows+=("node$i dead"); continue; fi
  cpu=$(awk -v a="${cpu0[$p]}" -v b="$(cpu_ticks "$p")" -v hz="$hz" -v d="$idle" 'BEGIN {printf "%.2f", (b - a) / hz / d * 100}')
  rows+=("node$i $(node_partitions "${addrs[$i]}") $cpu $(rss_mb "$p") $(threads "$p") $(fds "$p")/$(fd_limit "$p") $(du -sh "$dir/node$i/data" | cut -f1)")
done

echo "restarting..."
stop_cluster
t2=$(now)
start_cluster
up_s=$(elapsed "$t2")
restart_s=timeout
retries2=$(wait_sample again) && restart_s=$(elapsed "$t2")
after=()
for i in "${!pids[@]}"; do
  p=${pids[$i]}
  if kill -0 "$p" 2>/dev/null; then after+=("$(rss_mb "$p") $(fds "$p")"); else after+=("dead -"); fi
done

echo
echo "partitions requested $parts ($streams streams x $topics topics), created $created, create $create_s s, leaders+replicated (sample $sample) $leaders_s s"
printf '%-6s %10s %9s %7s %8s %13s %8s | %12s %10s\n' node partitions "idle CPU%" "RSS MB" threads "fds/limit" "data" "RSS restart" "fds restart"
for i in "${!rows[@]}"; do
  # shellcheck disable=SC2086 # a row is a list of fields
  set -- ${rows[$i]}
  printf '%-6s %10s %9s %7s %8s %13s %8s | %12s %10s\n' "$1" "$2" "${3:-}" "${4:-}" "${5:-}" "${6:-}" "${7:-}" ${after[$i]}
done
echo "restart: launcher reported leader after $up_s s; sample served by every node after $restart_s s (${retries2:-?} failed sends)"
report_logs
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
