#!/usr/bin/env bash
# The picture of the Grafana dashboard (docs/grafana/dibs-dashboard.json) on real data: runs the
# Spring Boot example (examples/spring-boot) as 3 instances against a throwaway redis-server, and
# scrapes each instance's /actuator/prometheus every second for about 45 s into
# target/dashboard-shot/scrapes/, as Prometheus would. At about 15 s it pauses the tick job on all
# 3 instances (POST /demo/pause), at about 30 s it resumes it (POST /demo/resume): nobody runs the
# job meanwhile, so the fleet view flags it overdue and clears it once it runs again. The
# instances read the fleet view every 500 ms (dibs.jobs.refresh) instead of every 10 s.
# Checks, and exits non-zero otherwise:
#   - dibs_job_overdue{lock="tick"} was 0 on every instance before the pause, reached 1 on every
#     instance during it and went back to 0 on every instance after the resume;
#   - no tick ran during the pause (dibs_lock_execution_seconds_count flat), and ticks ran again;
#   - /actuator/health's dibsJobs contributor said OUT_OF_SERVICE, naming the job, on every
#     instance while it was overdue.
# Then scripts/plot-dashboard.py draws the dashboard's panels from the scrapes into
# target/dashboard-shot/dashboard.png (matplotlib: no Grafana runs here). It ends with one line:
#   dashboard-shot: ok in N s: overdue flagged A-B ms after the pause, cleared C-D ms after resume (...)
# Usage: scripts/dashboard-shot.sh [--update-docs]
#   --update-docs   also copy the picture to docs/img/dashboard.png, which the starter's README shows
set -euo pipefail
cd "$(dirname "$0")/.."

update_docs=0
for arg in "$@"; do
  case "$arg" in
    --update-docs) update_docs=1 ;;
    *) echo "usage: $0 [--update-docs]" >&2; exit 2 ;;
  esac
done

bash scripts/ensure-deps.sh   # redis-server via apt-get when missing; checks java, mvn, python3

instances=3
jar=examples/spring-boot/target/dibs-spring-boot-example.jar
work=target/dashboard-shot
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)

. scripts/example-fleet.sh

# The example jar, built when missing or older than the example's sources (the root reactor,
# -pl examples/spring-boot -am). -Dcargo.skip: the native library already in target/natives.
if [ ! -f "$jar" ] || [ -n "$(find examples/spring-boot/pom.xml examples/spring-boot/src -newer "$jar" -print -quit)" ]; then
  echo "== building the example (and dibs, the starter): mvn -pl examples/spring-boot -am package"
  mvn -q -B -ntp -DskipTests -Dcargo.skip=true -Dcargo.testTools.skip=true \
    -pl examples/spring-boot -am package
  [ -f "$jar" ] || fail "no $jar after the build"
fi

start_redis
start_example java "$instances" --spring.data.redis.url="redis://127.0.0.1:$port" --dibs.jobs.refresh=500ms
echo "== scraping for 45 s (pause at 15 s, resume at 30 s)"

# The timed part, in one process: a scrape of every instance each second; the pause and the
# resume; and between them, the overdue gauge of each instance read every 100 ms until it flips,
# for the timings. Writes scrapes/app-N/<epoch ms>.prom, events.json, and health-paused-N.json
# (each instance's /actuator/health once all 3 flagged the job overdue).
targets=()
for i in $(seq 1 "$instances"); do
  targets+=("app-$i=127.0.0.1:${http[$((i - 1))]}")
done
python3 - "$work" "${targets[@]}" <<'PY' || fail "the scrape run failed"
import json, os, sys, time, urllib.error, urllib.request

work, targets = sys.argv[1], dict(t.split("=", 1) for t in sys.argv[2:])
TOTAL, PAUSE, RESUME, STEP = 45.0, 15.0, 30.0, 0.1

def get(addr, path):
    with urllib.request.urlopen(f"http://{addr}{path}", timeout=3) as r:
        return r.read()

def post(addr, path):
    req = urllib.request.Request(f"http://{addr}{path}", data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=3) as r:
        return json.load(r)

def overdue(addr):
    m = json.loads(get(addr, "/actuator/metrics/dibs.job.overdue?tag=lock:tick"))
    return next(x["value"] for x in m["measurements"] if x["statistic"] == "VALUE")

for name in targets:
    os.makedirs(f"{work}/scrapes/{name}", exist_ok=True)
ms = lambda t: int(round(t * 1000))
start = time.time()
events = {"start": ms(start), "targets": targets, "flagged": {}, "cleared": {}}
watch, watch_for, watch_from = {}, None, None   # instance -> still to flip; to which value
next_scrape, k = start, 0
while True:
    now = time.time()
    if now >= next_scrape:
        if now - start > TOTAL:
            break
        for name, addr in targets.items():
            t = time.time()
            body = get(addr, "/actuator/prometheus")
            with open(f"{work}/scrapes/{name}/{ms(t)}.prom", "wb") as f:
                f.write(body)
        k += 1
        next_scrape = start + k
    if "pause" not in events and now - start >= PAUSE:
        for addr in targets.values():
            assert post(addr, "/demo/pause") == {"paused": True}
        events["pause"] = ms(time.time())   # the job stopped on all of them
        watch, watch_for, watch_from, key = dict(targets), 1.0, time.time(), "flagged"
    if "resume" not in events and now - start >= RESUME:
        for addr in targets.values():
            assert post(addr, "/demo/resume") == {"paused": False}
        events["resume"] = ms(time.time())
        watch, watch_for, watch_from, key = dict(targets), 0.0, time.time(), "cleared"
    for name, addr in list(watch.items()):
        if overdue(addr) == watch_for:
            events[key][name] = ms(time.time()) - ms(watch_from)
            del watch[name]
            if key == "flagged" and not watch:
                for i, (n, a) in enumerate(targets.items(), 1):
                    try:
                        body = get(a, "/actuator/health")
                    except urllib.error.HTTPError as e:   # 503 when a contributor is DOWN or OUT_OF_SERVICE
                        body = e.read()
                    open(f"{work}/health-paused-{n}.json", "wb").write(body)
    time.sleep(max(0.0, min(STEP, next_scrape - time.time())))
events["end"] = ms(time.time())
json.dump(events, open(f"{work}/events.json", "w"), indent=1)
PY

# Stop everything: the instances first (graceful), then Redis.
stop_example
stop_redis

# The checks, on the scrapes themselves (what the picture shows), and the summary's figures.
summary=$(python3 - "$work" <<'PY'
import collections, glob, json, os, re, sys

work = sys.argv[1]
ev = json.load(open(f"{work}/events.json"))
pause, resume = ev["pause"], ev["resume"]

def value(path, metric, labels):
    pat = re.compile(r"^" + re.escape(metric) + r"\{" + re.escape(labels) + r"\} (\S+)$", re.M)
    m = pat.search(open(path).read())
    return float(m.group(1)) if m else None

problems, runs_end, paused_runs = [], 0, 0
for name in ev["targets"]:
    files = sorted(glob.glob(f"{work}/scrapes/{name}/*.prom"), key=lambda p: int(os.path.basename(p)[:-5]))
    series = [(int(os.path.basename(p)[:-5]), p) for p in files]
    od = [(t, value(p, "dibs_job_overdue", 'lock="tick"')) for t, p in series]
    runs = [(t, value(p, "dibs_lock_execution_seconds_count", 'lock="tick"')) for t, p in series]
    before = [v for t, v in od if t < pause]
    during = [v for t, v in od if pause <= t < resume]
    after = [v for t, v in od if t >= resume]
    if not before or before[-1] != 0.0:
        problems.append(f"{name}: dibs_job_overdue{{lock=\"tick\"}} was {before[-1:] or 'absent'} just before the pause, not 0")
    if 1.0 not in during:
        problems.append(f"{name}: dibs_job_overdue{{lock=\"tick\"}} never reached 1 during the pause: {during}")
    if not after or after[-1] != 0.0:
        problems.append(f"{name}: dibs_job_overdue{{lock=\"tick\"}} is {after[-1:] or 'absent'} at the end, not back to 0")
    # Runs during the pause: from the first scrape a second into it (a run in flight at the pause
    # may still end) to the last one before the resume.
    quiet = [v for t, v in runs if pause + 1000 <= t < resume]
    paused_runs += (quiet[-1] - quiet[0]) if quiet else 0
    runs_end += runs[-1][1] or 0
    after_runs = [v for t, v in runs if t >= resume]
    ev.setdefault("runs_after", 0)
    ev["runs_after"] += (after_runs[-1] - after_runs[0]) if after_runs else 0
for key in ("flagged", "cleared"):
    if len(ev[key]) != len(ev["targets"]):
        problems.append(f"the 100 ms probe saw the job {key} on {sorted(ev[key])} only")
if paused_runs:
    problems.append(f"{int(paused_runs)} tick(s) ran during the pause")
if not ev["runs_after"]:
    problems.append("no tick ran after the resume")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
# What /actuator/health said once all 3 flagged the job: the dibsJobs contributor must say
# OUT_OF_SERVICE (dibs.jobs.overdue-status's default), naming the job.
health = collections.defaultdict(list)
for name in ev["targets"]:
    h = json.load(open(f"{work}/health-paused-{name}.json"))
    jobs = h.get("components", {}).get("dibsJobs")
    if not jobs or jobs.get("status") != "OUT_OF_SERVICE" or "tick" not in jobs.get("details", {}).get("overdue", []):
        problems.append(f"{name}: dibsJobs health while overdue: {jobs}")
    health[f"{h.get('status')} (dibsJobs {jobs['status'] if jobs else 'absent'})"].append(name)
health = [f"{answer} on {' '.join(names)}" for answer, names in health.items()]
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
f, c = ev["flagged"].values(), ev["cleared"].values()
print(f"overdue flagged {min(f)}-{max(f)} ms after the pause and cleared {min(c)}-{max(c)} ms after resume "
      f"on all {len(ev['targets'])} instances; runs counted {int(runs_end)} (0 during the {(resume - pause) / 1000:.1f} s pause); "
      f"health while overdue: {', '.join(health)}")
PY
) || fail "the scrapes do not show the job going overdue and recovering (above)"

echo "== drawing the dashboard's panels: scripts/plot-dashboard.py"
python3 scripts/plot-dashboard.py "$work" || fail "scripts/plot-dashboard.py failed"
[ -s "$work/dashboard.png" ] || fail "no $work/dashboard.png"
if [ "$update_docs" = 1 ]; then
  mkdir -p docs/img
  cp "$work/dashboard.png" docs/img/dashboard.png
  echo "copied to docs/img/dashboard.png"
fi
echo "dashboard-shot: ok in ${SECONDS} s: $summary"
