#!/usr/bin/env bash
# dibs side by side with ShedLock (Jedis and Lettuce providers) and the raw Redis limit.
#
#   bash bench/run.sh              # client JVM and redis-server pinned to different CPUs
#   bash bench/run.sh --unpinned   # let the scheduler place them
#
# Installs dibs from the root into ~/.m2, builds the harness (bench/pom.xml, output in
# bench/target), starts a throwaway redis-server on a free loopback port (never one that happens
# to be running), runs every contender against it, stops it, and writes bench/results/:
# results.md, latency-cdf.png, throughput.png and the CSVs behind them. Other arguments go to
# bench.Bench (--rounds N, --window-ms MS, --samples N, --leak-calls N, --leak-all); --out DIR
# writes somewhere else than bench/results.
# BENCH_JAVA_OPTS adds JVM flags, e.g. -Ddibs.native.path=/path/to/libdibs.so to compare builds.
set -euo pipefail
cd "$(dirname "$0")/.."

pinned=true
out=bench/results
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --unpinned) pinned=false ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    *) args+=("$1") ;;
  esac
  shift
done

bash scripts/ensure-deps.sh   # redis-server and redis-benchmark via apt-get when missing
command -v taskset >/dev/null || { echo "missing taskset (util-linux)" >&2; exit 1; }
python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install -q matplotlib

echo "== installing io.github.dibs:dibs:0.1.0-SNAPSHOT from the root (cargo build --release, then the jar)"
# maven.test.skip rather than skipTests: the harness needs the jar, not the test classes.
mvn -q -B -ntp -Dmaven.test.skip=true -Dcargo.testTools.skip=true install
echo "== building the harness (bench/pom.xml)"
mvn -q -B -ntp -f bench/pom.xml package dependency:build-classpath -Dmdep.outputFile=target/classpath
classpath="bench/target/classes:$(cat bench/target/classpath)"

# On 2+ CPUs: redis-server on the last CPU, the client JVM (and everything it spawns:
# redis-benchmark, the fresh JVMs) on the others. Unpinned on 2 cores, single-thread latency
# swings with whether the scheduler puts client and server on the same CPU.
cpus=$(nproc)
server_pin=()
client_pin=()
pinning="not pinned (--unpinned)"
if $pinned; then
  if [ "$cpus" -ge 2 ]; then
    server_cpu=$((cpus - 1))
    client_cpus=$([ "$cpus" -eq 2 ] && echo 0 || echo "0-$((cpus - 2))")
    server_pin=(taskset -c "$server_cpu")
    client_pin=(taskset -c "$client_cpus")
    pinning="client JVM (and redis-benchmark, the fresh JVMs) pinned to CPU $client_cpus, redis-server to CPU $server_cpu, with taskset"
  else
    pinning="not pinned (1 CPU)"
  fi
fi

redis_pid=""
stop_redis() {
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
    redis_pid=""
  fi
}
trap stop_redis EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A port found free may be taken before redis binds it, and a server answering there may be
# someone else's: accept only the server whose process_id is our child's.
port=""
for _ in 1 2 3 4 5; do
  candidate=$(free_port)
  "${server_pin[@]}" redis-server --port "$candidate" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize no >/dev/null 2>&1 &
  redis_pid=$!
  for _ in $(seq 100); do
    if pid=$(redis-cli -h 127.0.0.1 -p "$candidate" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p') \
        && [ -n "$pid" ]; then
      break
    fi
    kill -0 "$redis_pid" 2>/dev/null || break
    sleep 0.05
  done
  if [ "${pid:-}" = "$redis_pid" ]; then
    port=$candidate
    break
  fi
  stop_redis
done
[ -n "$port" ] || { echo "could not start redis-server on a free loopback port" >&2; exit 1; }
echo "== redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') (pid $redis_pid) on 127.0.0.1:$port"

mkdir -p "$out"
# Fixed, pre-touched heap: no heap resizing during the windows.
# shellcheck disable=SC2086 # BENCH_JAVA_OPTS is a list of flags
"${client_pin[@]}" java -Xms1g -Xmx1g -XX:+AlwaysPreTouch --enable-native-access=ALL-UNNAMED ${BENCH_JAVA_OPTS:-} \
  -cp "$classpath" bench.Bench --port "$port" --pinning "$pinning" --out "$out" "${args[@]}"
stop_redis

python3 bench/plot.py "$out"
