#!/usr/bin/env bash
# Where a saturated redis-server's time goes, per contender: 16 threads of full lock cycles on
# distinct names (bench.Fresh leak), client pinned to CPU 0 and a throwaway redis-server to CPU 1;
# for each, the server's CPU per cycle (INFO cpu), the time inside commands per cycle (INFO
# commandstats: a script's time includes the commands it calls), the TCP segments per cycle (from
# /proc/net/snmp: the machine's, so run it on a quiet one) and a perf profile of the server
# (perf-<contender>.data; `perf report --sort dso` splits kernel from user space).
# Needs the harness built (bash bench/run.sh, or mvn -Pbench -pl bench -am package
# dependency:build-classpath -Dmdep.outputFile=target/classpath) and perf (Debian: linux-perf).
# Usage: bash bench/profile-server.sh   (CALLS=400000 by default; PROFILE_OUT=target/profile-server)
set -euo pipefail
cd "$(dirname "$0")/.."
CP="bench/target/classes:$(cat bench/target/classpath)"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
D=$(realpath -m "${PROFILE_OUT:-target/profile-server}"); mkdir -p "$D"
taskset -c 1 redis-server --port $PORT --bind 127.0.0.1 --save '' --appendonly no --daemonize yes --pidfile $D/redis.pid --logfile $D/redis.log --dir $D
for _ in $(seq 50); do redis-cli -p $PORT ping >/dev/null 2>&1 && break; sleep 0.1; done
RPID=$(cat $D/redis.pid)
trap 'kill $RPID' EXIT
CALLS=${CALLS:-400000}
cpu() { redis-cli -p $PORT info cpu | awk -F: '/used_cpu_(sys|user):/ {s+=$2} END {printf "%.6f", s}'; }
# TCP segments sent, machine-wide (on loopback, each is also counted as received)
segments() { awk '/^Tcp:/ {n++; if (n == 2) print $12}' /proc/net/snmp; }
for c in "dibs" "dibs (history off)" "raw Jedis" "ShedLock-Jedis"; do
  tag=$(echo "$c" | tr -c 'a-zA-Z' '_')
  # warm-up, unmeasured
  taskset -c 0 java -cp "$CP" bench.Fresh leak "$c" 127.0.0.1 $PORT 100000 16 >/dev/null
  redis-cli -p $PORT config resetstat >/dev/null
  c0=$(cpu)
  s0=$(segments)
  perf record -q -F 1999 -g -p $RPID -o $D/perf-$tag.data 2>/dev/null &
  PERF=$!
  sleep 0.3
  taskset -c 0 java -cp "$CP" bench.Fresh leak "$c" 127.0.0.1 $PORT $CALLS 16 > $D/out-$tag.txt
  seconds=$(grep -o 'seconds=[0-9.]*' $D/out-$tag.txt | cut -d= -f2) # the calls alone, JVM start left out
  kill -INT $PERF; wait $PERF || true
  c1=$(cpu)
  s1=$(segments)
  redis-cli -p $PORT info commandstats > $D/stats-$tag.txt
  python3 - "$c" "$seconds" "$c0" "$c1" $CALLS $D/stats-$tag.txt $((s1 - s0)) <<'PY'
import sys, re
name, wall, c0, c1, calls, stats = sys.argv[1], *map(float, sys.argv[2:5]), int(sys.argv[5]), sys.argv[6]
segments = int(sys.argv[7]) / calls
srv = (c1 - c0) * 1e6 / calls
parts = []
total = 0
for line in open(stats):
    m = re.match(r"cmdstat_(\w+):calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)", line.strip())
    if m and int(m.group(2)) >= calls // 2:
        parts.append(f"{m.group(1)} {int(m.group(2))/calls:.2f}/cycle {int(m.group(3))/calls:.2f} us")
        total += int(m.group(3)) / calls
print(f"{name:20s} {calls/wall:9,.0f} cycles/s | server CPU {srv:5.1f} us/cycle, busy {srv*calls/wall/1e6:4.0%} | {segments:.2f} TCP segments/cycle | in commands {total:5.2f} us/cycle: " + "; ".join(parts))
PY
done
