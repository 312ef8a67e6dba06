#!/usr/bin/env bash
# Builds the native libraries that the jar carries, into target/natives/<platform>/<lib>, where
# both builds (pom.xml, build.gradle.kts) pick up every library present.
#
# Usage: scripts/build-natives.sh [host | NAME...]
#   host    (fast local mode) only this machine's library, with the host toolchain
#   linux   linux-x86_64, linux-aarch64 (glibc 2.17), linux-x86_64-musl, linux-aarch64-musl
#   all     linux, plus windows-x86_64, macos-x86_64 and macos-aarch64
#   or platform names, mixed with linux or all: e.g. "linux windows-x86_64".
#   index   only (re)write target/natives/natives.properties and the diffs for the libraries present (after
#           staging libraries built elsewhere into target/natives, e.g. a release's merged ones)
#   --list  print the names of all platforms, space-separated, and build nothing (the other
#           scripts read the list here)
#
# Every run ends by writing target/natives/natives.properties, NativeLoader's index: the version
# of the crate that builds the cdylib (the native version the jar expects) and each present
# library's sha256, size and CRC-32. Both builds stage it beside the libraries, as dibs/native/. Then
# scripts/native-diff.py writes target/natives/<platform>.diff for each library but the glibc
# ones: the jar of every platform carries those instead of the libraries (bsdiff4 from PyPI,
# pinned below, is installed into target/cross-tools when there is a base to diff against).
#
# Cross builds use cargo-zigbuild with zig, both pinned below and installed from PyPI into
# target/cross-tools the first time; the Rust targets come from rustup. macOS links against
# framework stubs (.tbd) that scripts/macos-stubs.py writes, since zig carries no Apple SDK.
# Prints the build times and each library's size.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_ZIGBUILD_VERSION=0.24.1
ZIGLANG_VERSION=0.17.1
BSDIFF4_VERSION=1.3.2 # scripts/native-diff.py's matcher
OUT=target/natives
TOOLS=target/cross-tools
# Cargo's target directory for these builds, apart from the workspace's target/: cargo holds a
# target directory's lock for all of a build, and the test command builds these in the
# background while the tests' own cargo runs.
BUILD=target/natives-build

# platform -> cargo target (zigbuild may add a glibc version suffix) and the library file name.
declare -A TARGET=(
  [linux-x86_64]=x86_64-unknown-linux-gnu.2.17
  [linux-aarch64]=aarch64-unknown-linux-gnu.2.17
  [linux-x86_64-musl]=x86_64-unknown-linux-musl
  [linux-aarch64-musl]=aarch64-unknown-linux-musl
  [windows-x86_64]=x86_64-pc-windows-gnu
  [macos-x86_64]=x86_64-apple-darwin
  [macos-aarch64]=aarch64-apple-darwin
)
LINUX=(linux-x86_64 linux-aarch64 linux-x86_64-musl linux-aarch64-musl)
ALL=("${LINUX[@]}" windows-x86_64 macos-x86_64 macos-aarch64)

lib_file() {
  case "$1" in
    windows-*) echo dibs.dll ;;
    macos-*) echo libdibs.dylib ;;
    *) echo libdibs.so ;;
  esac
}

host_platform() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=macos ;;
    MINGW* | MSYS* | CYGWIN*) os=windows ;;
    *) echo "build-natives: unknown OS $(uname -s)" >&2; exit 1 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) echo "build-natives: unknown architecture $(uname -m)" >&2; exit 1 ;;
  esac
  local suffix=""
  # Same rule as NativeLoader: musl's dynamic loader on the machine means a musl libc.
  if [ "$os" = linux ] && ls /lib/ld-musl-*.so.1 >/dev/null 2>&1 && ! ls /lib*/ld-linux*.so* >/dev/null 2>&1; then
    suffix=-musl
  fi
  echo "$os-$arch$suffix"
}

size_of() { wc -c <"$1" | tr -d ' '; }

stage() { # platform built-file
  mkdir -p "$OUT/$1"
  cp "$2" "$OUT/$1/$(lib_file "$1")"
  printf '  %-20s %9s bytes  %s\n' "$1" "$(size_of "$OUT/$1/$(lib_file "$1")")" "$OUT/$1/$(lib_file "$1")"
}

build_host() {
  local platform start
  platform=$(host_platform)
  start=$SECONDS
  cargo build --profile dist -p dibs-jni --lib --target-dir "$BUILD"
  echo "build-natives: $platform (host toolchain) in $((SECONDS - start)) s"
  stage "$platform" "$BUILD/dist/$(lib_file "$platform")"
}

install_cross_tools() {
  local venv=$TOOLS/venv-$CARGO_ZIGBUILD_VERSION-$ZIGLANG_VERSION
  if [ ! -x "$venv/bin/cargo-zigbuild" ]; then
    echo "build-natives: installing cargo-zigbuild $CARGO_ZIGBUILD_VERSION and zig $ZIGLANG_VERSION into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check \
      "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION" "ziglang==$ZIGLANG_VERSION"
  fi
  # cargo-zigbuild finds zig through `python3 -m ziglang` of this venv.
  export PATH="$PWD/$venv/bin:$PATH"
}

build_cross() { # platforms...
  install_cross_tools
  local p t
  local -a rust_targets=()
  for p in "$@"; do
    rust_targets+=("${TARGET[$p]%.2.17}")
  done
  local -a missing=()
  for t in "${rust_targets[@]}"; do
    rustup target list --installed | grep -qx "$t" || missing+=("$t")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    rustup target add "${missing[@]}"
  fi
  # A musl cdylib must link libc dynamically, or it could not be dlopen()ed.
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static"
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static"
  # One cargo invocation for every target but macOS's: cargo builds the build scripts and
  # proc macros once, and keeps both cores busy across targets where one target's build runs a
  # single crate at a time. Each macOS target needs a deployment target of its own, an
  # environment variable, so each is an invocation of its own.
  local -a together=() apart=()
  for p in "$@"; do
    case "$p" in
      macos-*) apart+=("$p") ;;
      *) together+=("$p") ;;
    esac
  done
  if [ ${#together[@]} -gt 0 ]; then
    local -a targets=()
    for p in "${together[@]}"; do
      targets+=(--target "${TARGET[$p]}")
    done
    local start=$SECONDS
    cargo zigbuild --profile dist -p dibs-jni --lib --target-dir "$BUILD" "${targets[@]}"
    echo "build-natives: ${together[*]} in $((SECONDS - start)) s, in one cargo invocation"
    for p in "${together[@]}"; do
      stage "$p" "$BUILD/${TARGET[$p]%.2.17}/dist/$(lib_file "$p")"
    done
  fi
  for p in "${apart[@]}"; do
    local rust_target=${TARGET[$p]} deployment=11.0
    python3 scripts/macos-stubs.py "$TOOLS/macos-sdk"
    # zig would record macOS 15 as the minimum. 10.14: what security-framework is built for.
    [ "$p" = macos-x86_64 ] && deployment=10.14
    local start=$SECONDS
    # The install name would otherwise be this machine's build path.
    MACOSX_DEPLOYMENT_TARGET=$deployment cargo zigbuild --profile dist -p dibs-jni --lib --target-dir "$BUILD" \
      --target "$rust_target" \
      --config "target.$rust_target.rustflags=['-C','link-arg=-F$PWD/$TOOLS/macos-sdk/Frameworks','-C','link-arg=-Wl,-install_name,@rpath/libdibs.dylib']"
    echo "build-natives: $p ($rust_target) in $((SECONDS - start)) s"
    stage "$p" "$BUILD/$rust_target/dist/$(lib_file "$p")"
  done
}

# --- NativeLoader's index (natives.properties) ---------------------------------------------
write_index() {
  mkdir -p "$OUT"
  # The version from Cargo itself: the [package] of a single crate or a [workspace.package]
  # inherited by crates/dibs-jni read alike. The crate is the one that builds the cdylib "dibs".
  cargo metadata --format-version 1 --no-deps | python3 -c '
import hashlib, json, sys, zlib
from pathlib import Path
out = Path(sys.argv[1])
versions = sorted({p["version"] for p in json.load(sys.stdin)["packages"] for t in p["targets"]
                   if t["name"] == "dibs" and "cdylib" in t["crate_types"]})
if len(versions) != 1:
    sys.exit(f"build-natives: expected one crate building the cdylib dibs, found versions {versions}")
lines = ["# NativeLoader reads this: written by scripts/build-natives.sh, do not edit",
         f"version={versions[0]}"]
for lib in sorted(p for name in ("libdibs.so", "libdibs.dylib", "dibs.dll") for p in out.glob("*/" + name)):
    data = lib.read_bytes()
    platform = lib.parent.name
    lines += [f"{platform}.sha256={hashlib.sha256(data).hexdigest()}", f"{platform}.size={len(data)}",
              f"{platform}.crc32={zlib.crc32(data):08x}"]
(out / "natives.properties").write_text("\n".join(lines) + "\n")
print(f"build-natives: {out}/natives.properties: version {versions[0]}, {(len(lines) - 2) // 3} libraries")
' "$OUT"
}

# --- the diffs the jar of every platform carries (scripts/native-diff.py) ----------------------
write_diffs() {
  local python=python3 libs
  libs=$(find "$OUT" -mindepth 2 -maxdepth 2 \( -name libdibs.so -o -name libdibs.dylib -o -name dibs.dll \) | wc -l)
  if [ "$libs" -gt 1 ]; then # a library and its base, maybe: the matcher is needed
    local venv=$TOOLS/venv-bsdiff4-$BSDIFF4_VERSION
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import bsdiff4' 2>/dev/null; then
      echo "build-natives: installing bsdiff4 $BSDIFF4_VERSION into $venv"
      rm -rf "$venv"
      python3 -m venv "$venv"
      "$venv/bin/pip" install -q --disable-pip-version-check "bsdiff4==$BSDIFF4_VERSION"
    fi
    python=$venv/bin/python
  fi
  echo "build-natives: the diffs the jar of every platform carries, in $OUT"
  "$python" scripts/native-diff.py "$OUT"
}

# What every run ends with: NativeLoader's index, then the diffs, for the libraries present.
write_index_and_diffs() {
  write_index
  write_diffs
}

main() {
  if [ "${1:-}" = --list ] && [ $# -eq 1 ]; then
    echo "${ALL[*]}"
    return
  fi
  if [ "${1:-}" = index ] && [ $# -eq 1 ]; then
    write_index_and_diffs
    return
  fi
  if [ "${1:-host}" = host ] && [ $# -le 1 ]; then
    build_host
    write_index_and_diffs
    return
  fi
  local -a want=()
  local p
  for p in "$@"; do
    case "$p" in
      linux) want+=("${LINUX[@]}") ;;
      all) want+=("${ALL[@]}") ;;
      *)
        [ -n "${TARGET[$p]:-}" ] || { echo "build-natives: unknown platform '$p' (known: linux, all, host alone, ${ALL[*]})" >&2; exit 64; }
        want+=("$p")
        ;;
    esac
  done
  build_cross "${want[@]}"
  write_index_and_diffs
}

main "$@"
