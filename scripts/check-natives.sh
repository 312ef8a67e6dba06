#!/usr/bin/env bash
# Proves on this x86_64 machine what it can of the Linux libraries in target/natives:
#   1. glibc baseline: scripts/check-natives.py (GLIBC_2.17 at most, only glibc's own NEEDED,
#      musl libraries NEED only libc.so, each the right machine with the JNI entry points),
#      and the same check fails on a library built by this machine's own toolchain;
#   2. musl: a C program dlopen()s each -musl library under musl's dynamic loader (x86_64
#      natively, aarch64 under qemu) and finds its JNI entry points; a glibc library fails there.
# (aarch64 glibc: the Java tests run on a real aarch64 JVM, scripts/test-aarch64.sh.)
# Usage: scripts/check-natives.sh [a host-toolchain libdibs.so, as the negative control]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-platform-tools.sh

echo "-- glibc baseline, NEEDED, machine and JNI symbols"
python3 scripts/check-natives.py target/natives

control=${1:-target/release/libdibs.so}
if [ -f "$control" ]; then
  fake=$(mktemp -d)
  cp -r target/natives/. "$fake/"
  cp "$control" "$fake/linux-x86_64/libdibs.so"
  if python3 scripts/check-natives.py "$fake" >/dev/null 2>"$fake.err"; then
    echo "check-natives: the check passed a host-toolchain library ($control); it proves nothing" >&2
    exit 1
  fi
  echo "  negative control: a host-toolchain build ($control) is refused: $(grep -m1 linux-x86_64 "$fake.err")"
  rm -rf "$fake" "$fake.err"
fi

echo "-- musl: dlopen(RTLD_NOW) under musl's dynamic loader"
out=target/native-checks
mkdir -p "$out"
zig="$(ls -d target/cross-tools/venv-*/bin | head -n 1)/python3 -m ziglang"
musl-gcc -O1 -o "$out/dlopen_check-x86_64-musl" crates/dibs-jni/tests/dlopen_check.c
$zig cc -target aarch64-linux-musl -dynamic -O1 -o "$out/dlopen_check-aarch64-musl" crates/dibs-jni/tests/dlopen_check.c
musl_arm64=$PWD/target/cross-tools/musl-arm64
read -r -a symbols <<< "$(python3 scripts/check-natives.py --symbols)"
run() { # arch file...
  local arch=$1; shift
  if [ "$arch" = aarch64 ]; then
    qemu-aarch64-static -L "$musl_arm64" "$out/dlopen_check-aarch64-musl" "$@"
  else
    "$out/dlopen_check-x86_64-musl" "$@"
  fi
}
for arch in x86_64 aarch64; do
  lib=$PWD/target/natives/linux-$arch-musl/libdibs.so
  run "$arch" "$lib" "${symbols[@]}" >/dev/null
  echo "  linux-$arch-musl: loaded by ld-musl-$arch.so.1, ${#symbols[@]} JNI symbols found"
  if run "$arch" "$PWD/target/natives/linux-$arch/libdibs.so" "${symbols[0]}" >/dev/null 2>&1; then
    echo "check-natives: musl's loader accepted the glibc library linux-$arch: the check proves nothing" >&2
    exit 1
  fi
done
echo "  negative control: musl's loader refuses the glibc libraries"
