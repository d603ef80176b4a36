# Shared shell functions for the compatibility suite; sourced by compat/run
# and by each compat/<sdk>/run.sh. Nothing here reaches beyond loopback.
#
# start_iggo VAR [ENV=VALUE ...]
#   Starts "$IGGO_BIN server" on a free loopback port with a fresh data
#   directory under $COMPAT_WORK, waits until it accepts, and sets VAR to its
#   host:port and VAR_PID to its PID. Extra arguments are environment
#   assignments for that server (e.g. IGGY_TCP_TLS_ENABLED=true). When the
#   server reports [quic], [websocket] and [http] listeners, VAR_QUIC, VAR_WS
#   and VAR_HTTP are set to their host:port as well (VAR_WS serves WSS when the server was
#   started with IGGY_WEBSOCKET_TLS_ENABLED=true). VAR_DATA is its data
#   directory (system.path). The server is stopped by PID when the calling
#   shell exits.
# start_versitygw VAR
#   Starts versitygw, the S3 server of the tiered-storage checks (posix
#   backend: object KEY of bucket B is the file VAR_ROOT/B/KEY), on a free
#   loopback port with a fresh root under $COMPAT_WORK holding one bucket,
#   and waits until it listens. Sets VAR to its endpoint (http://host:port),
#   VAR_PID, VAR_BUCKET, VAR_ACCESS_KEY, VAR_SECRET_KEY, VAR_ROOT and VAR_LOG.
#   The binary is $IGGO_VERSITYGW, else versitygw in PATH, else
#   $(go env GOPATH)/bin/versitygw (.ci/run installs it there); without one
#   it returns 2, and 1 when it does not start. It is stopped by PID when
#   the calling shell exits.
# start_iggo_cluster VAR [ENV=VALUE ...]
#   Starts a local five-node cluster ("$IGGO_BIN cluster start --nodes 5",
#   replication factor 3) on a free range of loopback ports, with
#   IGGY_CLUSTER_NODES_0_METADATA_ONLY=true in the environment every node
#   inherits: node 0 holds no partition replica, so every partition lives on
#   three of nodes 1-4. Node 0 is the first metadata leader of a fresh
#   cluster, the node the official SDKs settle on; a start where another node
#   won the first election is retried. Waits until the nodes agree on node 0,
#   then sets VAR to node 0's client address, VAR_PID to the launcher's PID,
#   VAR_DIR to the cluster directory (node<i>/server.log are the nodes' logs)
#   and VAR_LOG to the launcher's output. Extra arguments are environment
#   assignments for the nodes. The cluster is stopped by PID (the launcher
#   stops its nodes) when the calling shell exits.
# cluster_map_command VAR FILE
#   Prints a shell command that writes the partition map as node VAR sees it
#   ("$IGGO_BIN cluster partitions -o json") to FILE: a scenario runs it
#   (COMPAT_CLUSTER_MAP_CMD) while its topics exist, before it deletes them.
# assert_cluster_placement FILE NODE STREAM PARTITIONS
#   Checks the map in FILE: stream STREAM has PARTITIONS partitions, each
#   with three replicas of which none is NODE, and NODE leads none of them
#   (a known leader is one of the replicas). Prints one PASS/FAIL line
#   ("PASS cluster.placement ...") and returns non-zero on a failure.
# make_cert DIR
#   Writes DIR/ca.pem, a fresh self-signed ECDSA P-256 CA, and DIR/key.pem +
#   DIR/cert.pem, a server certificate for localhost and 127.0.0.1 signed by
#   it; cert.pem holds that certificate followed by ca.pem, so it serves as
#   the server's chain and as a CA file alike. The server certificate itself
#   is not a CA: rustls (Rust and Python SDKs) rejects a CA certificate used
#   as the end entity (CaUsedAsEndEntity).

: "${IGGO_BIN:?IGGO_BIN must name the iggo binary}"
: "${COMPAT_WORK:=$(mktemp -d)}"
export COMPAT_WORK
COMPAT_PIDS=()

compat_cleanup() {
  local pid
  for pid in "${COMPAT_PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${COMPAT_PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
}
trap compat_cleanup EXIT

start_iggo() {
  local var=$1; shift
  local dir
  dir=$(mktemp -d "$COMPAT_WORK/server.XXXXXX")
  # QUIC, WebSocket and HTTP are on by default at fixed ports; every server
  # here binds free ports instead (the bound ones are in current_config.toml).
  env IGGY_QUIC_ADDRESS=127.0.0.1:0 IGGY_WEBSOCKET_ADDRESS=127.0.0.1:0 IGGY_HTTP_ADDRESS=127.0.0.1:0 "$@" "$IGGO_BIN" server --fresh --data-path "$dir/data" \
    --tcp-address 127.0.0.1:0 --log-level "${IGGO_LOG_LEVEL:-warn}" >"$dir/server.log" 2>&1 &
  local pid=$!
  COMPAT_PIDS+=("$pid")
  local cfg="$dir/data/runtime/current_config.toml" addr="" i
  for i in $(seq 1 100); do
    if [ -f "$cfg" ]; then
      addr=$(sed -n '/^\[tcp\]/,/^\[/s/^ *address = "\(.*\)"/\1/p' "$cfg" | head -1)
      [ -n "$addr" ] && break
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "iggo server exited at start:" >&2; cat "$dir/server.log" >&2; return 1
    fi
    sleep 0.1
  done
  if [ -z "$addr" ]; then
    echo "iggo server did not publish its address in 10 s:" >&2; cat "$dir/server.log" >&2; return 1
  fi
  printf -v "$var" '%s' "$addr"
  printf -v "${var}_PID" '%s' "$pid"
  printf -v "${var}_LOG" '%s' "$dir/server.log"
  printf -v "${var}_DATA" '%s' "$dir/data"
  export "$var" "${var}_PID" "${var}_LOG" "${var}_DATA"
  local section extra
  for section in quic:QUIC websocket:WS http:HTTP; do
    extra=$(sed -n "/^\[${section%%:*}\]/,/^\[/s/^ *address = \"\(.*\)\"/\1/p" "$cfg" | head -1)
    if [ -n "$extra" ]; then
      printf -v "${var}_${section#*:}" '%s' "$extra"
      export "${var}_${section#*:}"
    fi
  done
}

start_versitygw() {
  local var=$1 bin="" gobin dir log port pid i attempt sidecar=""
  if [ -n "${IGGO_VERSITYGW:-}" ]; then
    bin=$IGGO_VERSITYGW
  elif command -v versitygw >/dev/null 2>&1; then
    bin=$(command -v versitygw)
  elif command -v go >/dev/null 2>&1; then
    gobin="$(go env GOPATH | cut -d: -f1)/bin/versitygw"
    [ -x "$gobin" ] && bin=$gobin
  fi
  if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    echo "versitygw not found (IGGO_VERSITYGW, PATH, \$(go env GOPATH)/bin)" >&2
    return 2
  fi
  dir=$(mktemp -d "$COMPAT_WORK/versitygw.XXXXXX")
  log=$dir/versitygw.log
  mkdir -p "$dir/root/compat"
  for attempt in 1 2 3 4; do
    port=$(( 20000 + RANDOM % 12000 ))
    compat_port_busy "$port" && continue
    "$bin" --port "127.0.0.1:$port" --access compat-access --secret compat-secret-0123456789 \
      --region us-east-1 --quiet posix ${sidecar:+--sidecar "$sidecar"} "$dir/root" >>"$log" 2>&1 &
    pid=$!
    for i in $(seq 1 100); do
      if compat_port_busy "$port"; then
        COMPAT_PIDS+=("$pid")
        printf -v "$var" 'http://127.0.0.1:%s' "$port"
        printf -v "${var}_PID" '%s' "$pid"
        printf -v "${var}_BUCKET" '%s' compat
        printf -v "${var}_ACCESS_KEY" '%s' compat-access
        printf -v "${var}_SECRET_KEY" '%s' compat-secret-0123456789
        printf -v "${var}_ROOT" '%s' "$dir/root"
        printf -v "${var}_LOG" '%s' "$log"
        export "$var" "${var}_PID" "${var}_BUCKET" "${var}_ACCESS_KEY" "${var}_SECRET_KEY" "${var}_ROOT" "${var}_LOG"
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    # A file system without extended attributes: metadata in a sidecar.
    if [ -z "$sidecar" ] && grep -qs 'xattrs are not supported' "$log"; then
      sidecar=$dir/meta
      mkdir -p "$sidecar"
    fi
  done
  echo "versitygw did not start:" >&2
  tail -n 20 "$log" >&2
  return 1
}

# compat_port_busy PORT: true when something on this host listens on or
# uses the loopback TCP port PORT.
compat_port_busy() {
  if command -v ss >/dev/null 2>&1; then
    [ -n "$(ss -Htan "( sport = :$1 )" 2>/dev/null)" ]
    return
  fi
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# compat_free_base NODES: prints a base port B such that the client ports
# B..B+NODES-1 and the replica ports B+100.. are all free; the range is
# below the kernel's ephemeral ports (32768 and up on Linux).
compat_free_base() {
  local nodes=$1 try base i busy
  for try in $(seq 1 50); do
    base=$(( 20000 + (RANDOM % 120) * 100 + (RANDOM % 10) * 10 ))
    busy=0
    for i in $(seq 0 $((nodes - 1))); do
      if compat_port_busy $((base + i)) || compat_port_busy $((base + 100 + i)); then busy=1; break; fi
    done
    if [ "$busy" -eq 0 ]; then echo "$base"; return 0; fi
  done
  echo "no free port range found" >&2
  return 1
}

start_iggo_cluster() {
  local var=$1; shift
  local nodes=5 dir attempt base pid log i ready
  dir=$(mktemp -d "$COMPAT_WORK/cluster.XXXXXX")
  log=$dir/cluster.log
  for attempt in 1 2 3; do
    base=$(compat_free_base "$nodes") || return 1
    env IGGY_CLUSTER_NODES_0_METADATA_ONLY=true "$@" "$IGGO_BIN" cluster start --fresh \
      --nodes "$nodes" --dir "$dir/c" --base-port "$base" --wait 60s >"$log" 2>&1 &
    pid=$!
    ready=""
    for i in $(seq 1 900); do
      if grep -qs '^Ctrl-C stops the cluster' "$log"; then ready=yes; break; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if [ -n "$ready" ] && grep -Eq '^node0 +[^ ]+ +leader *$' "$log"; then
      COMPAT_PIDS+=("$pid")
      printf -v "$var" '127.0.0.1:%s' "$base"
      printf -v "${var}_PID" '%s' "$pid"
      printf -v "${var}_DIR" '%s' "$dir/c"
      printf -v "${var}_LOG" '%s' "$log"
      export "$var" "${var}_PID" "${var}_DIR" "${var}_LOG"
      return 0
    fi
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if [ -n "$ready" ]; then
      echo "cluster start $attempt: node 0 did not win the first election; starting again" >&2
    else
      echo "cluster start $attempt failed (ports from $base):" >&2
      tail -n 20 "$log" >&2
    fi
  done
  echo "no cluster with node 0 as its leader after 3 starts" >&2
  return 1
}

cluster_map_command() {
  local addr=${!1}
  printf '%q --addr %q cluster partitions -o json >%q' "$IGGO_BIN" "$addr" "$2"
}

assert_cluster_placement() {
  local file=$1 node=$2 stream=$3 want=$4 py
  py=$(command -v python3 || command -v python3.11 || true)
  if [ -z "$py" ]; then echo "FAIL cluster.placement: python3 not found to read $file"; return 1; fi
  if [ ! -s "$file" ]; then echo "FAIL cluster.placement: no partition map in $file (the scenario did not take it)"; return 1; fi
  "$py" - "$file" "$node" "$stream" "$want" <<'PY'
import json, sys
path, node, stream, want = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
try:
    parts = [p for p in json.load(open(path))["partitions"] if p["stream"] == stream]
except (OSError, ValueError, KeyError, TypeError) as err:
    print(f"FAIL cluster.placement: cannot read the partition map {path}: {err}")
    sys.exit(1)
bad = []
if len(parts) != want:
    bad.append(f"{len(parts)} partitions of stream {stream} in the map, expected {want}")
for p in parts:
    name = f"{p['topic']}/{p['partition']}"
    replicas, leader = p.get("replicas") or [], p.get("leader")
    if len(replicas) != 3 or node in replicas:
        bad.append(f"{name} has replicas {replicas}: want three, none of them node {node}")
    if leader == node or (leader is not None and leader not in replicas):
        bad.append(f"{name} is led by node {leader}")
led = sum(p.get("leader") is not None for p in parts)
if bad:
    print("FAIL cluster.placement: " + "; ".join(bad))
    sys.exit(1)
print(f"PASS cluster.placement: node {node} holds and leads none of the {len(parts)} partitions of {stream} "
      f"(leaders known for {led}, all on nodes {sorted({r for p in parts for r in p['replicas']})})")
PY
}

make_cert() {
  local dir=$1
  mkdir -p "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=iggo compat CA" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$dir/ca-key.pem" -out "$dir/ca.pem" >/dev/null 2>&1 || return 1
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj "/CN=localhost" -keyout "$dir/key.pem" -out "$dir/server.csr" >/dev/null 2>&1 || return 1
  printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >"$dir/server.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" \
    -set_serial "0x$(openssl rand -hex 8)" -days 2 -extfile "$dir/server.ext" \
    -out "$dir/server.pem" >/dev/null 2>&1 || return 1
  cat "$dir/server.pem" "$dir/ca.pem" >"$dir/cert.pem"
  rm -f "$dir/server.csr" "$dir/server.ext" "$dir/server.pem"
}
