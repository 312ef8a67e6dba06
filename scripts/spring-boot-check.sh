#!/usr/bin/env bash
# Runs the Spring Boot example (examples/spring-boot) as 3 instances against a throwaway
# redis-server, and checks from the Redis list they share (demo:ticks, the ledger) that every one-second tick ran exactly
# once: no duplicate anywhere, no missed tick while all 3 were up. Ends with
#   ticks=N executions=N duplicates=0 missed=0
# and exits non-zero otherwise. Logs and a copy of the ledger stay in target/spring-boot-check/
# Usage: scripts/spring-boot-check.sh
#   DIBS_SPRING_SECONDS  ticks to measure once every instance is up (default 15)
#   JAVA                 the java to run the instances with (default: java on the PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh   # redis-server via apt-get when missing; checks java, mvn, python3

instances=3
seconds=${DIBS_SPRING_SECONDS:-15}
java_bin=${JAVA:-java}
jar=examples/spring-boot/target/dibs-spring-boot-example-0.1.0-SNAPSHOT.jar
work=target/spring-boot-check
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
ledger=$work/ledger.txt

# Everything started here is killed on any exit; on success it has already stopped.
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  echo "logs: $work" >&2
  exit 1
}

# Waits up to $2 seconds for process $1 to exit; returns non-zero if it is still running.
wait_exit() {
  local pid=$1 deadline=$((SECONDS + $2))
  while kill -0 "$pid" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

echo "== building dibs (repository root) and the example"
mvn -q -B -ntp -DskipTests -Dcargo.testTools.skip=true install
mvn -q -B -ntp -f examples/spring-boot/pom.xml package
[ -f "$jar" ] || fail "no $jar after the build"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  >"$work/redis.log" 2>&1 &
redis_pid=$!
pids+=("$redis_pid")
deadline=$((SECONDS + 10))
until [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ]; do
  kill -0 "$redis_pid" 2>/dev/null || fail "redis-server did not start: $(tail -n 5 "$work/redis.log")"
  [ "$SECONDS" -lt "$deadline" ] || fail "redis-server on port $port did not answer within 10 s"
  sleep 0.1
done

# Three JVMs on a small machine: startup time matters, peak throughput does not.
jvm_flags=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1)
echo "== starting $instances instances on $("$java_bin" -version 2>&1 | head -n 1), redis on port $port"
app_pids=()
started=$SECONDS
for i in $(seq 1 "$instances"); do
  # No --enable-native-access flag even on JDK 24+: the jar's manifest carries it, and the
  # warning check below proves that it works.
  "$java_bin" "${jvm_flags[@]}" -jar "$jar" \
    --dibs.redis-uri="redis://127.0.0.1:$port" \
    --demo.instance="app-$i" \
    >"$work/app-$i.log" 2>&1 &
  app_pids+=($!)
  pids+=($!)
done

# Ticks count from the first whole second after every instance printed READY.
deadline=$((SECONDS + 90))
for i in $(seq 1 "$instances"); do
  until grep -qx "READY app-$i" "$work/app-$i.log"; do
    kill -0 "${app_pids[$((i - 1))]}" 2>/dev/null ||
      fail "app-$i exited before READY: $(tail -n 20 "$work/app-$i.log")"
    [ "$SECONDS" -lt "$deadline" ] || fail "app-$i not READY within 90 s"
    sleep 0.1
  done
done
ready_at=$(date +%s.%N)
first=$(( ${ready_at%.*} + 1 ))
echo "== all $instances READY in $((SECONDS - started)) s; measuring ticks $first.. for $seconds s"

# Stop once $seconds whole ticks have passed; the second in which shutdown begins is not counted.
sleep "$(python3 -c "import time; print(max(0.0, $first + $seconds + 0.05 - time.time()))")"
stop_at=$(date +%s.%N)
last=$(( ${stop_at%.*} - 1 ))
for pid in "${app_pids[@]}"; do
  kill -TERM "$pid"
done
for i in $(seq 1 "$instances"); do
  pid=${app_pids[$((i - 1))]}
  wait_exit "$pid" 30 || fail "app-$i still running 30 s after SIGTERM"
  status=0
  wait "$pid" || status=$?
  # 143 = 128 + SIGTERM: the JVM's exit code after a clean shutdown on that signal.
  [ "$status" -eq 0 ] || [ "$status" -eq 143 ] || fail "app-$i exited with $status after SIGTERM"
done
# Every instance tries the lock every second; Redis saw one SET NX per try.
attempts=$(redis-cli -p "$port" info commandstats | sed -n 's/^cmdstat_set:calls=\([0-9]*\).*/\1/p')
# The instances RPUSH "<instance> <tick>" onto demo:ticks; the checks below read it as a file.
redis-cli -p "$port" --raw lrange demo:ticks 0 -1 >"$ledger"
echo "lock attempts (SET NX calls seen by redis, whole run): ${attempts:-0}"

# Shutdown mid-task: SIGTERM while a 3-second locked job runs. The graceful shutdown must let the
# job finish, and its lock must then be released the normal way (atLeast 0: deleted).
echo "== SIGTERM while a locked 3 s job runs (graceful shutdown)"
"$java_bin" "${jvm_flags[@]}" -jar "$jar" --dibs.redis-uri="redis://127.0.0.1:$port" \
  --demo.instance=app-long --demo.long-job=true >"$work/app-long.log" 2>&1 &
long_pid=$!
pids+=("$long_pid")
deadline=$((SECONDS + 90))
until grep -qx "LONG STARTED" "$work/app-long.log"; do
  kill -0 "$long_pid" 2>/dev/null || fail "app-long exited before its job started: $(tail -n 20 "$work/app-long.log")"
  [ "$SECONDS" -lt "$deadline" ] || fail "app-long's job did not start within 90 s"
  sleep 0.05
done
[ "$(redis-cli -p "$port" exists dibs:long-job)" = 1 ] || fail "the long job runs without its lock"
kill -TERM "$long_pid"
wait_exit "$long_pid" 30 || fail "app-long still running 30 s after SIGTERM"
grep -qx "LONG FINISHED" "$work/app-long.log" || fail "SIGTERM cut the locked job short: $(tail -n 20 "$work/app-long.log")"
[ "$(redis-cli -p "$port" exists dibs:long-job)" = 0 ] || fail "the long job's lock was not released after it finished"
echo "SIGTERM mid-task: the job finished, then its lock was released"

kill -TERM "$redis_pid"
wait_exit "$redis_pid" 10 || fail "redis-server still running 10 s after SIGTERM"

# What a run must never log: the JVM's native-access warning (JDK 24+), and any Spring or
# dibs WARN/ERROR (dibs warns when a lock expired mid-task or its release failed).
if grep -HE '^WARNING: | (WARN|ERROR) [0-9]+ --- ' "$work"/app-*.log; then
  fail "warnings or errors in the instances' logs (above)"
fi

[ -s "$ledger" ] || fail "the ledger is empty: no instance ran a tick"
if ! python3 - "$ledger" "$first" "$last" <<'EOF'
import collections
import sys

ledger, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = collections.defaultdict(list)   # tick -> instances that ran it
with open(ledger) as f:
    for line in f:
        instance, tick = line.split()
        runs[int(tick)].append(instance)

# A tick run twice is a failure wherever it lies; a missed tick only inside the window, as
# instances start and stop at different moments outside it.
duplicates = {t: who for t, who in runs.items() if len(who) > 1}
window = range(first, last + 1)
missed = [t for t in window if t not in runs]
executions = sum(len(runs.get(t, [])) for t in window)
wins = collections.Counter(i for t in window for i in runs.get(t, []))

for t, who in sorted(duplicates.items()):
    print(f"duplicate: tick {t} ran on {' '.join(who)}")
for t in missed:
    print(f"missed: tick {t}")
print("runs per instance in the window: " + ", ".join(f"{i}={n}" for i, n in sorted(wins.items())))
extra = sum(len(who) - 1 for who in duplicates.values())
print(f"ticks={len(window)} executions={executions} duplicates={extra} missed={len(missed)}")
sys.exit(1 if extra or missed else 0)
EOF
then
  fail "a tick ran twice or not at all"
fi
echo "spring-boot-check: ok in ${SECONDS} s"
