#!/usr/bin/env bash
# Java SDK compatibility check: org.apache.iggy:iggy (version pinned in
# pom.xml) against iggo server, plain TCP and TLS. Run via: compat/run java.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${COMPAT_DIR:=$(dirname "$here")}"
# shellcheck source=../lib.sh
source "$COMPAT_DIR/lib.sh"

passed=0 failed=0
step() { # step NAME OK
  if [ "$2" = 0 ]; then echo "PASS $1"; passed=$((passed + 1)); else echo "FAIL $1"; failed=$((failed + 1)); fi
}
finish() {
  echo "java: $passed passed, $failed failed"
  if [ "$failed" -eq 0 ]; then exit 0; fi
  exit 1
}

for tool in java mvn openssl; do
  if ! command -v "$tool" >/dev/null; then step "$tool is installed" 1; finish; fi
done

start_iggo IGGO || { step "start iggo server" 1; finish; }
tls=$COMPAT_WORK/java-tls
make_cert "$tls" || { step "make TLS certificate" 1; finish; }
start_iggo IGGO_TLS IGGY_TCP_TLS_ENABLED=true IGGY_TCP_TLS_SELF_SIGNED=false \
  IGGY_TCP_TLS_CERT_FILE="$tls/cert.pem" IGGY_TCP_TLS_KEY_FILE="$tls/key.pem" ||
  { step "start iggo server with TLS" 1; finish; }
ca=$tls/ca.pem; [ -f "$ca" ] || ca=$tls/cert.pem
export IGGO_ADDR=$IGGO IGGO_TLS_ADDR=$IGGO_TLS IGGO_TLS_CA=$ca

build=$COMPAT_WORK/java-build
# Maven prints colour resets even in batch mode; strip them so the PASS/FAIL
# lines start their lines.
mvn -B -q -Dstyle.color=never -f "$here/pom.xml" -Dcompat.build.dir="$build" test 2>&1 |
  sed 's/\x1b\[[0-9;]*m//g'
mvn_rc=${PIPESTATUS[0]}

# Count the JUnit results from Surefire's reports (the PASS/FAIL lines
# above are printed by the tests themselves).
tests=0 bad=0
for f in "$build"/surefire-reports/TEST-*.xml; do
  [ -f "$f" ] || continue
  suite=$(grep -m1 -o '<testsuite [^>]*>' "$f")
  attr() { printf '%s' "$suite" | sed -n "s/.* $1=\"\([0-9]*\)\".*/\1/p"; }
  tests=$((tests + $(attr tests)))
  bad=$((bad + $(attr failures) + $(attr errors) + $(attr skipped)))
done
if [ "$tests" -eq 0 ]; then
  step "maven build and JUnit run (mvn exit $mvn_rc, no test reports)" 1
else
  passed=$((passed + tests - bad)) failed=$((failed + bad))
  [ "$mvn_rc" -eq 0 ] || [ "$bad" -gt 0 ] || step "maven exit status ($mvn_rc)" 1
fi

# The server names the refused legacy clients in its log.
grep -q 'legacy pre-0.11 framing' "$IGGO_LOG"
step "server log warns about the legacy clients" $?
grep -q 'legacy pre-0.11 framing' "$IGGO_TLS_LOG"
step "TLS server log warns about the legacy clients" $?
finish
