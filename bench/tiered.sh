#!/usr/bin/env bash
# Measures tiered storage in one run (bench/tiered/main.go): upload
# throughput of the server against a plain PUT of the same objects, a
# cold read from the bucket against a read from local disk, and local
# disk use while producing IGGO_BENCH_GB (default 2) GB with
# IGGO_BENCH_RETENTION (default 200 MiB) of local retention. The store is
# versitygw (posix backend) on loopback: $IGGO_VERSITYGW, else on PATH or
# in $(go env GOPATH)/bin (go install
# github.com/versity/versitygw/cmd/versitygw@v1.8.0). Run as root to drop
# the page cache before the reads. Result: bench/results/tiered.json.
# Usage: bench/tiered.sh [extra flags of bench/tiered]
set -euo pipefail
cd "$(dirname "$0")/.."
vgw=${IGGO_VERSITYGW:-$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")}
if [ ! -x "$vgw" ]; then
  echo "versitygw not found: go install github.com/versity/versitygw/cmd/versitygw@v1.8.0" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/iggo" ./cmd/iggo
go build -o "$tmp/tiered" ./bench/tiered
gb=${IGGO_BENCH_GB:-2}
retention=${IGGO_BENCH_RETENTION:-$((200 << 20))}
"$tmp/tiered" -iggo "$tmp/iggo" -versitygw "$vgw" -gb "$gb" -retention "$retention" \
  -dir "$tmp/run" -out "${IGGO_BENCH_OUT:-bench/results}/tiered.json" "$@"
