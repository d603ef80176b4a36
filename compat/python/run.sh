#!/usr/bin/env bash
# Python compatibility scenario: drives a fresh `iggo server` (plain TCP and
# TLS, and one with tiered storage uploading to a versitygw bucket) through
# the official apache-iggy SDK from PyPI, pinned with hashes in
# requirements.txt. Prints one PASS/FAIL line per step and, last,
# "python: N passed, N failed". Run it through compat/run python.
#
# Usage: run.sh [cluster]. With "cluster": the plain-TCP steps once more
# against node 0 of a five-node cluster (replication factor 3) that holds no
# partition replica, so that node forwards every partition request
# (start_iggo_cluster in lib.sh); the TLS, QUIC and WebSocket steps are
# skipped (COMPAT_CLUSTER), and the partition map taken before the cleanup
# must show node 0 holding and leading none of the scenario's partitions.
set -euo pipefail
mode=${1:-single}
here=$(cd "$(dirname "$0")" && pwd)
: "${COMPAT_DIR:=$(dirname "$here")}"
: "${COMPAT_CACHE:=$HOME/.cache/iggo-compat}"
# shellcheck source=../lib.sh
source "$COMPAT_DIR/lib.sh"

summary() { echo "python: $1 passed, $2 failed"; }
setup_failed() { echo "FAIL setup: $1"; summary 0 1; exit 1; }

# The wheel pinned in requirements.txt is the CPython 3.11 one.
py=$(command -v python3.11 || true)
[ -n "$py" ] || setup_failed "python3.11 not found"

# One venv per requirements.txt content; a changed pin builds a new one.
req=$here/requirements.txt
key=$(sha256sum "$req" | cut -c1-16)
venvs=$COMPAT_CACHE/python-venv
venv=$venvs/$key
if [ -f "$venv/.complete" ] && ! "$venv/bin/python" -c 'import apache_iggy, pytest' 2>/dev/null; then
  echo "python: cached venv $venv is broken; rebuilding"
  rm -f "$venv/.complete"
fi
if [ ! -f "$venv/.complete" ]; then
  echo "python: installing $(grep -c '^[a-z]' "$req") pinned packages into $venv"
  rm -rf "$venvs"
  mkdir -p "$venvs"
  "$py" -m venv "$venv" || setup_failed "cannot create the venv"
  # Only the registry: no local wheel directories from the environment.
  env -u PIP_FIND_LINKS -u PIP_NO_INDEX PIP_CACHE_DIR="$COMPAT_CACHE/pip" \
    "$venv/bin/python" -m pip install --quiet --no-input --disable-pip-version-check \
    --no-deps --require-hashes --only-binary=:all: -r "$req" ||
    setup_failed "pip install -r requirements.txt"
  touch "$venv/.complete"
fi

if [ "$mode" = cluster ]; then
  summary() { echo "python-cluster: $1 passed, $2 failed"; }
  start_iggo_cluster CLUSTER || setup_failed "start a five-node cluster"
  echo "python: apache-iggy $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("apache-iggy"))')," \
    "cluster of 5 nodes in $CLUSTER_DIR; node 0 ($CLUSTER) holds no partition"
  map=$COMPAT_WORK/python-cluster-map.json
  export COMPAT_PY_ADDR=$CLUSTER COMPAT_CLUSTER=1
  COMPAT_CLUSTER_MAP_CMD=$(cluster_map_command CLUSTER "$map")
  export COMPAT_CLUSTER_MAP_CMD
  export COMPAT_PY_RESULT=$COMPAT_WORK/python-cluster-result
  export PYTHONDONTWRITEBYTECODE=1  # keep the checkout clean
  rm -f "$COMPAT_PY_RESULT"
  cd "$here"
  rc=0
  timeout -k 10 900 "$venv/bin/python" -m pytest </dev/null || rc=$?
  if [ ! -s "$COMPAT_PY_RESULT" ]; then
    echo "FAIL pytest: exited $rc without a result"
    summary 0 1
    exit 1
  fi
  read -r passed failed <"$COMPAT_PY_RESULT"
  if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  # polling (2 partitions), routing (3), grouped (2), scratch (2 after its resize).
  if assert_cluster_placement "$map" 0 compat-python 9; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  for log in "$CLUSTER_DIR"/node*/server.log; do
    if grep -qiE 'panic|fatal' "$log"; then
      echo "FAIL server log ($log) reports a panic:"; grep -iE -m5 'panic|fatal' "$log"
      failed=$((failed + 1))
    fi
  done
  if [ "$failed" -ne 0 ]; then
    echo "python: last lines of the node logs under $CLUSTER_DIR"
    tail -n 15 "$CLUSTER_DIR"/node*/server.log || true
  fi
  summary "$passed" "$failed"
  [ "$failed" -eq 0 ]
  exit
fi

certs=$COMPAT_WORK/python-certs
make_cert "$certs/server" || setup_failed "make_cert"
make_cert "$certs/other" || setup_failed "make_cert"
start_iggo PLAIN || setup_failed "start plain iggo server"
# The plain server serves QUIC (ephemeral certificate) and plain WebSocket;
# the TLS server serves QUIC and WSS with the make_cert certificate too.
start_iggo TLS IGGY_TCP_TLS_ENABLED=true IGGY_TCP_TLS_SELF_SIGNED=false \
  IGGY_TCP_TLS_CERT_FILE="$certs/server/cert.pem" IGGY_TCP_TLS_KEY_FILE="$certs/server/key.pem" \
  IGGY_QUIC_CERTIFICATE_SELF_SIGNED=false \
  IGGY_QUIC_CERTIFICATE_CERT_FILE="$certs/server/cert.pem" IGGY_QUIC_CERTIFICATE_KEY_FILE="$certs/server/key.pem" \
  IGGY_WEBSOCKET_TLS_ENABLED=true IGGY_WEBSOCKET_TLS_SELF_SIGNED=false \
  IGGY_WEBSOCKET_TLS_CERT_FILE="$certs/server/cert.pem" IGGY_WEBSOCKET_TLS_KEY_FILE="$certs/server/key.pem" ||
  setup_failed "start TLS iggo server"
# Tiered storage (tests/test_09_tiered.py): a third server uploads sealed
# segments to a versitygw bucket and drops each local copy once uploaded.
# Without versitygw the tiered steps are skipped, or fail under CI.
servers=(PLAIN TLS)
vgw_rc=0
start_versitygw S3 || vgw_rc=$?
if [ "$vgw_rc" -eq 0 ]; then
  start_iggo TIERED IGGY_TIERED_STORAGE_ENABLED=true IGGY_TIERED_STORAGE_ENDPOINT="$S3" \
    IGGY_TIERED_STORAGE_BUCKET="$S3_BUCKET" IGGY_TIERED_STORAGE_PREFIX=compat \
    IGGY_TIERED_STORAGE_ACCESS_KEY_ID="$S3_ACCESS_KEY" IGGY_TIERED_STORAGE_SECRET_ACCESS_KEY="$S3_SECRET_KEY" \
    IGGY_TIERED_STORAGE_LOCAL_RETENTION_SIZE=0 IGGY_TIERED_STORAGE_UPLOAD_INTERVAL="200 ms" ||
    setup_failed "start tiered iggo server"
  servers+=(TIERED)
  export COMPAT_PY_TIERED_ADDR=$TIERED COMPAT_PY_TIERED_DATA=$TIERED_DATA
  export COMPAT_PY_TIERED_BUCKET_DIR=$S3_ROOT/$S3_BUCKET COMPAT_PY_TIERED_PREFIX=compat
elif [ "$vgw_rc" -eq 2 ] && [ -z "${CI:-}" ]; then
  export COMPAT_PY_TIERED_SKIP="versitygw not found: set IGGO_VERSITYGW or install it (.ci/run does)"
elif [ "$vgw_rc" -eq 2 ]; then
  export COMPAT_PY_TIERED_ERROR="versitygw not found: set IGGO_VERSITYGW or install it (.ci/run does)"
else
  export COMPAT_PY_TIERED_ERROR="versitygw did not start (its output is above)"
fi
echo "python: apache-iggy $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("apache-iggy"))')," \
  "servers $PLAIN (tcp) and $TLS (tls); quic ${PLAIN_QUIC:-none} / ${TLS_QUIC:-none}," \
  "ws ${PLAIN_WS:-none}, wss ${TLS_WS:-none}; tiered ${TIERED:-none} (bucket ${S3:-none})"

export COMPAT_PY_ADDR=$PLAIN COMPAT_PY_TLS_ADDR=$TLS
export COMPAT_PY_QUIC_ADDR=${PLAIN_QUIC:-} COMPAT_PY_QUIC_TLS_ADDR=${TLS_QUIC:-}
export COMPAT_PY_WS_ADDR=${PLAIN_WS:-} COMPAT_PY_WSS_ADDR=${TLS_WS:-}
# QuicConfig takes no CA file: with validate_certificate the SDK's QUIC
# client trusts the platform root store, which on Linux is the file named by
# SSL_CERT_FILE. TCP-TLS and WSS here always name their CA file explicitly.
export SSL_CERT_FILE=$certs/server/ca.pem
export COMPAT_PY_TLS_CA=$certs/server/ca.pem COMPAT_PY_OTHER_CA=$certs/other/ca.pem
export COMPAT_PY_RESULT=$COMPAT_WORK/python-result
export PYTHONDONTWRITEBYTECODE=1  # keep the checkout clean
rm -f "$COMPAT_PY_RESULT"
cd "$here"
rc=0
timeout -k 10 900 "$venv/bin/python" -m pytest </dev/null || rc=$?

if [ ! -s "$COMPAT_PY_RESULT" ]; then
  echo "FAIL pytest: exited $rc without a result"
  summary 0 1
  exit 1
fi
read -r passed failed <"$COMPAT_PY_RESULT"
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
for srv in "${servers[@]}"; do
  log=${srv}_LOG
  if grep -qiE 'panic|fatal' "${!log}"; then
    echo "FAIL server log ($srv) reports a panic:"; grep -iE -m5 'panic|fatal' "${!log}"
    failed=$((failed + 1))
  fi
done
summary "$passed" "$failed"
[ "$failed" -eq 0 ]
