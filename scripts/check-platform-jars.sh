#!/usr/bin/env bash
# The jar per platform of a release (java/pom.xml's release profile: classifier = platform), as
# scripts/check-release.sh left it in target/release-repo, which also checked what each carries:
# with nothing but the linux-x86_64 jar on the class path, a JVM loads the library from it
# (extracted into a fresh directory, the same bytes as target/natives') and runs a lock cycle
# against a redis-server of its own (java/src/test/java/dibs/PlatformSmoke.java); with nothing but
# the linux-aarch64 jar, the same JVM finds no library for its platform (the negative control).
# Run after scripts/check-release.sh --all-platforms, on x86_64 Linux.
set -euo pipefail
cd "$(dirname "$0")/.."

REPO=target/release-repo/io/github/dibs/dibs
dir=$(find "$REPO" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$dir" ] || { echo "check-platform-jars: nothing under $REPO (run scripts/check-release.sh first)" >&2; exit 1; }
WORK=$(mktemp -d)
failures=0
miss() { printf '  MISS  %s\n' "$*"; failures=$((failures + 1)); }
ok() { printf '  ok    %s\n' "$*"; }

# The deployed jar of platform $1 (its classifier); a SNAPSHOT's names are timestamped.
jar_of() {
  local suffix=-$1
  find "$dir" -maxdepth 1 -name "dibs-*$suffix.jar" ! -name '*-sources.jar' ! -name '*-javadoc.jar' \
    | grep -E -- "-[0-9.]+(-[0-9]{8}\.[0-9]{6}-[0-9]+)?(-SNAPSHOT)?$suffix\.jar$" | sort | tail -n 1
}

echo "== a JVM with the linux-x86_64 jar alone on its class path"
x86=$(jar_of linux-x86_64)
arm=$(jar_of linux-aarch64)
mkdir -p "$WORK/smoke" "$WORK/extract" "$WORK/extract-arm"
javac --release 11 -cp "$x86" -d "$WORK/smoke" java/src/test/java/dibs/PlatformSmoke.java
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
  --pidfile "$WORK/redis.pid" --logfile "$WORK/redis.log"
cleanup() { kill "$(cat "$WORK/redis.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

if java -Ddibs.native.tmpdir="$WORK/extract" -cp "$x86:$WORK/smoke" dibs.PlatformSmoke "redis://127.0.0.1:$PORT" \
  >"$WORK/x86.log" 2>&1; then
  copy=$(find "$WORK/extract" -name '*.so' | head -n 1)
  if [ -n "$copy" ] && cmp -s "$copy" target/natives/linux-x86_64/libdibs.so; then
    ok "linux-x86_64 jar alone: $(tail -n 1 "$WORK/x86.log"); the library was extracted from it"
  else
    miss "linux-x86_64 jar alone: the smoke passed, but no copy of its library is in the extraction directory"
  fi
else
  cat "$WORK/x86.log"
  miss "linux-x86_64 jar alone: the smoke failed"
fi
if java -Ddibs.native.tmpdir="$WORK/extract-arm" -cp "$arm:$WORK/smoke" dibs.PlatformSmoke "redis://127.0.0.1:$PORT" \
  >"$WORK/arm.log" 2>&1; then
  miss "linux-aarch64 jar alone on x86_64: the smoke passed; the check above proves nothing"
elif grep -q 'linux-x86_64' "$WORK/arm.log"; then
  ok "negative control: the linux-aarch64 jar alone finds no library for linux-x86_64"
else
  cat "$WORK/arm.log"
  miss "linux-aarch64 jar alone: failed without naming the missing platform"
fi

if [ "$failures" -eq 0 ]; then
  echo "check-platform-jars: OK"
else
  echo "check-platform-jars: $failures check(s) failed" >&2
  exit 1
fi
