#!/usr/bin/env bash
# Compatibility scenario for the official Iggy Rust SDK (crate iggy =0.11.0,
# pinned in Cargo.toml and Cargo.lock). Run through compat/run, which sets
# IGGO_BIN, COMPAT_DIR, COMPAT_CACHE and COMPAT_WORK.
#
# Usage: run.sh [cluster]. Without an argument: against single servers
# (plain TCP, TLS, QUIC, WebSocket, WSS). With "cluster": the plain-TCP
# checks once more against node 0 of a five-node cluster (replication
# factor 3) that holds no partition replica, so that node forwards every
# partition request (start_iggo_cluster in lib.sh); afterwards the partition
# map taken before the cleanup must show node 0 holding and leading none of
# the scenario's partitions.
set -euo pipefail
mode=${1:-single}
here=$(cd "$(dirname "$0")" && pwd)
: "${COMPAT_DIR:=$(dirname "$here")}"
: "${COMPAT_CACHE:=$HOME/.cache/iggo-compat}"
# shellcheck source=../lib.sh
source "$COMPAT_DIR/lib.sh"

command -v cargo >/dev/null || { echo "rust: cargo not found on PATH"; echo "rust: 0 passed, 1 failed"; exit 1; }
export CARGO_TARGET_DIR=$COMPAT_CACHE/rust-target
export CARGO_TERM_COLOR=never CARGO_TERM_PROGRESS_WHEN=never

echo "rust: building the scenario (iggy =0.11.0, $(cargo --version))"
start=$(date +%s)
if ! cargo build --locked --quiet --manifest-path "$here/Cargo.toml"; then
  echo "FAIL build: cargo build failed"
  echo "rust: 0 passed, 1 failed"
  exit 1
fi
echo "rust: build took $(( $(date +%s) - start )) s"

# Counts the PASS/FAIL lines of a scenario that died before its summary.
died() {
  [ "$status" -ne 0 ] || status=1
  echo "FAIL scenario: ended without a summary (exit status $status)"
  passed=$(grep -c '^PASS ' "$out" || true) failed=$(( $(grep -c '^FAIL ' "$out" || true) + 1 ))
}

if [ "$mode" = cluster ]; then
  if ! start_iggo_cluster CLUSTER; then
    echo "FAIL cluster: could not start a five-node cluster"
    echo "rust-cluster: 0 passed, 1 failed"
    exit 1
  fi
  echo "rust: cluster of 5 nodes in $CLUSTER_DIR; node 0 ($CLUSTER) holds no partition"
  out=$COMPAT_WORK/rust-cluster.out map=$COMPAT_WORK/rust-cluster-map.json
  status=0
  IGGO_ADDR=$CLUSTER COMPAT_CLUSTER=1 COMPAT_CLUSTER_MAP_CMD=$(cluster_map_command CLUSTER "$map") \
    "$CARGO_TARGET_DIR/debug/iggo-compat-rust" | tee "$out" || status=$?
  if summary=$(tail -n 1 "$out" | grep -E '^rust: [0-9]+ passed, [0-9]+ failed$'); then
    read -r passed failed < <(echo "$summary" | sed -E 's/^rust: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/')
  else
    died
  fi
  # orders (3 partitions) and group-events (2).
  if assert_cluster_placement "$map" 0 compat-rust 5; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  if [ "$failed" -ne 0 ]; then
    echo "rust: last lines of the node logs under $CLUSTER_DIR"
    tail -n 15 "$CLUSTER_DIR"/node*/server.log || true
  fi
  echo "rust-cluster: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
fi

start_iggo IGGO_PLAIN
certs=$COMPAT_WORK/rust-certs
make_cert "$certs"
# The TLS server also serves WSS and QUIC with the same certificate.
start_iggo IGGO_TLS IGGY_TCP_TLS_ENABLED=true IGGY_TCP_TLS_SELF_SIGNED=false \
  IGGY_TCP_TLS_CERT_FILE="$certs/cert.pem" IGGY_TCP_TLS_KEY_FILE="$certs/key.pem" \
  IGGY_QUIC_CERTIFICATE_SELF_SIGNED=false \
  IGGY_QUIC_CERTIFICATE_CERT_FILE="$certs/cert.pem" IGGY_QUIC_CERTIFICATE_KEY_FILE="$certs/key.pem" \
  IGGY_WEBSOCKET_TLS_ENABLED=true IGGY_WEBSOCKET_TLS_SELF_SIGNED=false \
  IGGY_WEBSOCKET_TLS_CERT_FILE="$certs/cert.pem" IGGY_WEBSOCKET_TLS_KEY_FILE="$certs/key.pem"

out=$COMPAT_WORK/rust-scenario.out
# The SDK's QUIC client takes no CA file: with validate_certificate it uses
# rustls-platform-verifier, whose Linux root store (rustls-native-certs) is
# the file named by SSL_CERT_FILE. TCP-TLS and WSS without a CA file use the
# built-in webpki roots, so this reaches only QUIC.
export SSL_CERT_FILE=$certs/ca.pem
status=0
IGGO_ADDR=$IGGO_PLAIN IGGO_TLS_ADDR=$IGGO_TLS IGGO_TLS_CA=$certs/cert.pem \
  IGGO_QUIC_ADDR=${IGGO_PLAIN_QUIC:-} IGGO_WS_ADDR=${IGGO_PLAIN_WS:-} IGGO_WSS_ADDR=${IGGO_TLS_WS:-} \
  IGGO_QUIC_TLS_ADDR=${IGGO_TLS_QUIC:-} \
  "$CARGO_TARGET_DIR/debug/iggo-compat-rust" | tee "$out" || status=$?
if ! tail -n 1 "$out" | grep -Eq '^rust: [0-9]+ passed, [0-9]+ failed$'; then
  # The scenario died before its summary (a panic or a signal): count what it printed.
  died
  echo "rust: $passed passed, $failed failed"
fi
if [ "$status" -ne 0 ]; then
  echo "rust: last server log lines (plain: $IGGO_PLAIN_LOG, TLS: $IGGO_TLS_LOG)"
  tail -n 40 "$IGGO_PLAIN_LOG" "$IGGO_TLS_LOG" || true
fi
exit "$status"
