#!/usr/bin/env bash
# Builds the Redis-compatible servers of the compatibility matrix from their source archives
# (../shared/redis-servers/, or DIBS_REDIS_SOURCES), once: the binaries are cached under
# target/redis-servers/<name>-<sha256 prefix>/ and reused while the archive's checksum is the
# same. Prints one line per server: "<label> <dir with redis-server and redis-cli>".
#
#   bash scripts/redis-servers.sh            # build what is missing, then list
#
# Each archive's checksum must be the one its README gives: a changed archive is refused.
set -euo pipefail
cd "$(dirname "$0")/.."
sources=${DIBS_REDIS_SOURCES:-$(cd .. && pwd)/shared/redis-servers}
[ -d "$sources" ] || sources=/work/shared/redis-servers
[ -d "$sources" ] || { echo "redis-servers: no source archives in $sources (set DIBS_REDIS_SOURCES)" >&2; exit 1; }
cache=target/redis-servers
mkdir -p "$cache"
# label, archive, the sha256 of its README
while read -r label archive sha; do
  file="$sources/$archive"
  [ -f "$file" ] || { echo "redis-servers: missing $file" >&2; exit 1; }
  actual=$(sha256sum "$file" | cut -d' ' -f1)
  [ "$actual" = "$sha" ] || { echo "redis-servers: $archive has checksum $actual, expected $sha" >&2; exit 1; }
  dir="$cache/${archive%.tar.gz}-${sha:0:12}"
  if [ ! -x "$dir/redis-server" ] || [ ! -x "$dir/redis-cli" ]; then
    build=$(mktemp -d)
    echo "redis-servers: building $archive (make BUILD_TLS=yes, about 2 minutes)" >&2
    tar -xzf "$file" -C "$build"
    src=$(find "$build" -mindepth 1 -maxdepth 1 -type d | head -1)
    make -C "$src" -j2 BUILD_TLS=yes MALLOC=libc >"$build/make.log" 2>&1 \
      || { tail -30 "$build/make.log" >&2; echo "redis-servers: the build of $archive failed" >&2; exit 1; }
    mkdir -p "$dir"
    # Valkey's binaries are valkey-*; it answers to redis-server as a link name too.
    for tool in server cli; do
      for name in "redis-$tool" "valkey-$tool"; do
        if [ -x "$src/src/$name" ]; then cp -L "$src/src/$name" "$dir/redis-$tool"; break; fi
      done
    done
    rm -rf "$build"
  fi
  echo "$label $(pwd)/$dir"
done <<'LIST'
redis-6.2.16 redis-6.2.16.tar.gz 2f1eed7d76428a96bbd1b091027e238a1a97d403061d3ac7345e0779a2aaac40
redis-7.4.1 redis-7.4.1.tar.gz 4de2e6f23676e4d3872547a51731b8c78de812ff09260712c20f4ce01d1bad30
valkey-8.0.1 valkey-8.0.1.tar.gz bccb382a0f583fb419526348ed07c3d19e0b6fe8f5492aa3b3037793016ea478
LIST
