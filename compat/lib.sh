# Shared shell functions for the compatibility suite; sourced by compat/run
# and by each compat/<sdk>/run.sh. Nothing here reaches beyond loopback.
#
# start_iggo VAR [ENV=VALUE ...]
#   Starts "$IGGO_BIN server" on a free loopback port with a fresh data
#   directory under $COMPAT_WORK, waits until it accepts, and sets VAR to its
#   host:port and VAR_PID to its PID. Extra arguments are environment
#   assignments for that server (e.g. IGGY_TCP_TLS_ENABLED=true). The server
#   is stopped by PID when the calling shell exits.
# make_cert DIR
#   Writes DIR/cert.pem and DIR/key.pem: a self-signed ECDSA P-256 certificate
#   for localhost and 127.0.0.1, which is also its own CA.

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
  env "$@" "$IGGO_BIN" server --fresh --data-path "$dir/data" \
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
}

make_cert() {
  local dir=$1
  mkdir -p "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -keyout "$dir/key.pem" -out "$dir/cert.pem" >/dev/null 2>&1
}
