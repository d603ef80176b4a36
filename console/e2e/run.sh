#!/usr/bin/env bash
# Console tests: unit tests of the console's modules (node:test), then the
# end-to-end tests in headless Chromium against a real iggo server and
# against a local three-node cluster (iggo cluster start --http).
# Needs node >= 20, npm, go and Debian's chromium (apt-get install -y chromium).
# Exits non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"

echo "== console unit tests"
node --test "$here/../unit/"

echo "== npm ci (playwright-core, no browser download)"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund

echo "== go build iggo"
mkdir -p "$here/.build"
(cd "$repo" && go build -o "$here/.build/iggo" ./cmd/iggo)

echo "== end-to-end tests"
IGGO_BIN="$here/.build/iggo" node --test --test-concurrency=1 --test-timeout=600000 "$here/e2e.test.js" "$here/cluster.test.js"
