# Sourced by scripts/spring-boot-check.sh and scripts/dashboard-shot.sh, not run: what both do
# with the Spring Boot example (examples/spring-boot) as a fleet of instances on one throwaway
# redis-server. The caller sets `work` (where logs go) and `jar` (the example's jar) first.
# Names it sets are plain variables, so a caller's `local port redis_pid app_pids http` keeps
# them inside its own function.

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

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Three JVMs on a small machine: startup time matters, peak throughput does not.
jvm_flags=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1)

# A redis-server on a free loopback port, without persistence, its files in $work; sets `port`
# and `redis_pid` once it answers (10 s at most).
start_redis() {
  port=$(free_port)
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
    >"$work/redis.log" 2>&1 &
  redis_pid=$!
  pids+=("$redis_pid")
  local deadline=$((SECONDS + 10))
  until [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ]; do
    kill -0 "$redis_pid" 2>/dev/null || fail "redis-server did not start: $(tail -n 5 "$work/redis.log")"
    [ "$SECONDS" -lt "$deadline" ] || fail "redis-server on port $port did not answer within 10 s"
    sleep 0.1
  done
}

# Instances app-1 .. app-$2 of the example on java $1, each also given the arguments after $2,
# its own free --server.port, --demo.instance and --dibs.instance-id, and the log
# $work/app-N.log; sets `app_pids` and `http` (their ports), then waits up to 120 s for every
# one to print READY.
start_example() {
  local java_bin=$1 count=$2 i
  shift 2
  echo "== starting $count instances, redis on port $port"
  app_pids=()
  http=()
  local started=$SECONDS
  for i in $(seq 1 "$count"); do
    http+=("$(free_port)")
    "$java_bin" "${jvm_flags[@]}" -jar "$jar" --spring.profiles.active=local "$@" --server.port="${http[$((i - 1))]}" \
      --demo.instance="app-$i" --dibs.instance-id="app-$i" >"$work/app-$i.log" 2>&1 &
    app_pids+=($!)
    pids+=($!)
  done
  local deadline=$((SECONDS + 120))
  for i in $(seq 1 "$count"); do
    until grep -qsx "READY app-$i" "$work/app-$i.log"; do
      kill -0 "${app_pids[$((i - 1))]}" 2>/dev/null ||
        fail "app-$i exited before READY: $(tail -n 20 "$work/app-$i.log")"
      [ "$SECONDS" -lt "$deadline" ] || fail "app-$i not READY within 120 s"
      sleep 0.1
    done
  done
  echo "== all $count READY in $((SECONDS - started)) s"
}

# SIGTERM to every instance of start_example; each must exit within 30 s, cleanly.
stop_example() {
  local pid i status
  for pid in "${app_pids[@]}"; do
    kill -TERM "$pid"
  done
  for i in $(seq 1 "${#app_pids[@]}"); do
    pid=${app_pids[$((i - 1))]}
    wait_exit "$pid" 30 || fail "app-$i still running 30 s after SIGTERM"
    status=0
    wait "$pid" || status=$?
    # 143 = 128 + SIGTERM: the JVM's exit code after a clean shutdown on that signal.
    [ "$status" -eq 0 ] || [ "$status" -eq 143 ] || fail "app-$i exited with $status after SIGTERM"
  done
}

# SIGTERM to the redis-server of start_redis; it must exit within 10 s.
stop_redis() {
  kill -TERM "$redis_pid"
  wait_exit "$redis_pid" 10 || fail "redis-server still running 10 s after SIGTERM"
}
