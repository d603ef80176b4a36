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
#   started with IGGY_WEBSOCKET_TLS_ENABLED=true). The server is stopped by
#   PID when the calling shell exits.
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
  export "$var" "${var}_PID" "${var}_LOG"
  local section extra
  for section in quic:QUIC websocket:WS http:HTTP; do
    extra=$(sed -n "/^\[${section%%:*}\]/,/^\[/s/^ *address = \"\(.*\)\"/\1/p" "$cfg" | head -1)
    if [ -n "$extra" ]; then
      printf -v "${var}_${section#*:}" '%s' "$extra"
      export "${var}_${section#*:}"
    fi
  done
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
