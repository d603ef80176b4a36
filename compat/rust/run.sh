#!/usr/bin/env bash
# Compatibility scenario for the official Iggy Rust SDK (crate iggy =0.11.0,
# pinned in Cargo.toml and Cargo.lock). Run through compat/run, which sets
# IGGO_BIN, COMPAT_DIR, COMPAT_CACHE and COMPAT_WORK.
set -euo pipefail
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
  [ "$status" -ne 0 ] || status=1
  echo "FAIL scenario: ended without a summary (exit status $status)"
  echo "rust: $(grep -c '^PASS ' "$out" || true) passed, $(( $(grep -c '^FAIL ' "$out" || true) + 1 )) failed"
fi
if [ "$status" -ne 0 ]; then
  echo "rust: last server log lines (plain: $IGGO_PLAIN_LOG, TLS: $IGGO_TLS_LOG)"
  tail -n 40 "$IGGO_PLAIN_LOG" "$IGGO_TLS_LOG" || true
fi
exit "$status"
