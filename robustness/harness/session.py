"""One run of the harness: a topology, a seed, a number of seconds. Starts the servers, the
ledger and the workload; lets the nemesis inject its schedule; then asks dibs what it saw (`dibs
check`, the starter's health, polled as the run goes), reads the history, stops everything and
hands it all to the checker."""

import json
import random
import shutil
import signal
import subprocess
import threading
import time
import re
import urllib.error
import urllib.request
from pathlib import Path

from . import checker, faults, history, resp, servers, workload

JOBS = ["h-exec", "h-once", "h-catchup", "h-lease", "h-run", "s-once", "s-catchup", "s-shed"]
SPRING_PERIODS = {"s-once": 1000, "s-catchup": 1000, "s-shed": 1000}


class Workload:
    """The instances and cron hosts of one run, and what restarts a killed instance."""

    def __init__(self, ledger, uri, seed, seconds, logdir, fronts):
        self.ledger, self.uri, self.seed, self.seconds, self.logdir = ledger, uri, seed, seconds, logdir
        self.fronts = fronts
        rng = random.Random("%s/skew" % seed)
        # one library instance and one cron host run with a clock off the machine's
        self.skews = {"lib2": "%+.1fs" % rng.uniform(-1.5, 1.5), "cron2": "%+.1fs" % rng.uniform(-1.5, 1.5)}
        self.instances = []
        self.cron = []
        self.restarts = 0
        self.started = time.time()
        self.zone_anchor = int(self.started)  # every Spring worker's zone changes from it alike

    def start(self):
        for name in ("lib1", "lib2") if "library" in self.fronts else ():
            self.instances.append(workload.library(self.ledger, self.uri, name, self.seconds, self.seed,
                                                   self.logdir, self.skews.get(name)))
        for name in ("spring1", "spring2") if "spring" in self.fronts else ():
            self.instances.append(workload.spring(self.ledger, self.uri, name, self.logdir, self.seed,
                                                  self.zone_anchor))
        for name in ("cron1", "cron2") if "cron" in self.fronts else ():
            self.cron.append(workload.CronHost(self.ledger, self.uri, name, "%s/%s" % (self.seed, name),
                                               self.skews.get(name)))
        self.watch = threading.Thread(target=self._watch_ready, daemon=True)
        self.watch.start()

    def _watch_ready(self):
        """Records `up` when an instance says READY, `down` when it ends."""
        seen = {}
        while True:
            for w in list(self.instances):
                key = id(w)
                if key not in seen and w.ready():
                    seen[key] = True
                    self.ledger.record(k="up", i=w.name, f=w.front)
                if seen.get(key) is True and not w.alive():
                    seen[key] = False
                    self.ledger.record(k="down", i=w.name, f=w.front)
            time.sleep(0.1)

    def wait_ready(self, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if all(w.ready() for w in self.instances):
                return
            dead = [w.name for w in self.instances if not w.alive()]
            if dead:
                raise RuntimeError("instances ended before READY: %s (logs in %s)" % (dead, self.logdir))
            time.sleep(0.2)
        raise TimeoutError("instances not READY in %d s: %s" % (
            seconds, [w.name for w in self.instances if not w.ready()]))

    def restart(self, old):
        """A killed instance comes back under the same name, as a service's supervisor restarts it."""
        left = max(5, int(self.seconds - (time.time() - self.started)))
        base = old.name.split(".")[0]
        self.restarts += 1
        name = "%s.%d" % (base, self.restarts)  # its calls' ids must not repeat the first life's
        if old.front == "library":
            new = workload.library(self.ledger, self.uri, name, left, self.seed + self.restarts, self.logdir,
                                   self.skews.get(base))
        else:
            new = workload.spring(self.ledger, self.uri, name, self.logdir, self.seed + self.restarts,
                                 self.zone_anchor)
        self.instances[self.instances.index(old)] = new

    def start_cron(self):
        for host in self.cron:
            host.start(self.seconds)


def health_jobs(doc):
    """{job: 'ok' | 'overdue' | 'unknown'} from /actuator/health's dibsJobs component (its details'
    `jobs`, each with `overdue`, or `unknown` where the starter cannot judge it)."""
    details = ((doc.get("components") or {}).get("dibsJobs") or {}).get("details") or {}
    jobs = {}
    for job, detail in (details.get("jobs") or {}).items():
        if isinstance(detail, dict):
            unknown = detail.get("unknown") or detail.get("state") == "unknown"
            jobs[job] = "unknown" if unknown else "overdue" if detail.get("overdue") else "ok"
    return jobs


def gauge_jobs(text):
    """{job: 'ok' | 'overdue' | 'unknown'} from /actuator/prometheus's dibs_job_overdue gauge, and
    its dibs_job_unknown (1 where the starter cannot judge the job)."""
    jobs, unknown = {}, set()
    for line in text.splitlines():
        m = re.match(r'dibs_job_(overdue|unknown)\{.*?(?:lock|job)="([^"]+)".*\}\s+([0-9.]+)', line)
        if m and m.group(1) == "overdue":
            jobs[m.group(2)] = "overdue" if float(m.group(3)) >= 1 else "ok"
        elif m and float(m.group(3)) >= 1:
            unknown.add(m.group(2))
    return {job: "unknown" if job in unknown else said for job, said in jobs.items()}


def fetch(url):
    """The body of a GET; a 503 (the health OUT_OF_SERVICE) still carries one."""
    try:
        with urllib.request.urlopen(url, timeout=1.5) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        return e.read().decode()


def poll_health(ledger, spring, halt):
    """Every 2 s, what each Spring instance says of its jobs: the dibsJobs health and the gauge."""
    while not halt.wait(2.0):
        for w in spring:
            if not w.alive() or w.stopped:
                continue
            base = "http://127.0.0.1:%d/actuator/" % w.port
            try:
                doc = json.loads(fetch(base + "health"))
                ledger.record(k="health", i=w.name, jobs=health_jobs(doc), raw=json.dumps(doc)[:2000])
                ledger.record(k="gauge", i=w.name, jobs=gauge_jobs(fetch(base + "prometheus")))
            except (OSError, ValueError):
                continue


def dibs_check(uri, job, within):
    proc = subprocess.run([workload.dibs_binary(), "check", "--redis", uri, job, "--within", within],
                          capture_output=True, text=True, timeout=30)
    return proc.returncode, (proc.stdout + proc.stderr).strip().replace("\n", " | ")[:300]


FRONTS = ("library", "spring", "cron")


def run(kind, seed, seconds, workdir, fronts=FRONTS):
    """One run; returns (checker, counts, nemesis schedule, ledger path)."""
    from .ledger import Ledger

    workdir = Path(workdir).resolve() / ("%s-%d" % (kind, seed))
    shutil.rmtree(workdir, ignore_errors=True)  # a replay starts from empty servers
    workdir.mkdir(parents=True)
    topology = servers.TOPOLOGIES[kind](servers.suite_server(), workdir)
    try:
        topology.start()
    except BaseException:
        topology.stop()
        raise
    rng = random.Random("%s/keys" % seed)
    if kind != "cluster":  # foreign keys beside dibs's: the listings and scans must skip them
        resp.call(topology.masters()[0].port, "DEBUG", "POPULATE", rng.choice([10000, 100000, 300000]), "foreign",
                  timeout=30)
    ledger = Ledger(workdir / "ledger.jsonl")
    wall0 = time.time() * 1000 - ledger.now_ms()
    ledger.record(k="begin", d="%s seed %d, %d s" % (kind, seed, seconds), wall0=wall0)
    load = Workload(ledger, topology.uri(), seed, seconds, workdir, fronts)
    ledger.record(k="zone", anchor=load.zone_anchor, every=workload.ZONE_EVERY_S, shift=workload.ZONE_SHIFT_S)
    nemesis = faults.Nemesis(ledger, topology, load, seed, seconds)
    halt = threading.Event()
    try:
        load.start()
        load.wait_ready(120)
        load.start_cron()
        nemesis.start()
        poller = threading.Thread(target=poll_health, args=(ledger, [w for w in load.instances if w.front == "spring"],
                                                            halt), daemon=True)
        poller.start()
        time.sleep(seconds)
        nemesis.stop()
        for host in load.cron:
            host.stop()
        for w in load.instances:
            if w.front == "library":
                w.finish(45)
        halt.set()
        for w in load.instances:
            if w.front == "spring":
                w.signal(signal.SIGTERM)
                w.finish(20)
        end_ts = ledger.now_ms()
        ledger.record(k="workload-end")
        time.sleep(4)
        checks = []
        for job in JOBS:
            for within in ("3s", "30s"):
                ts = ledger.now_ms()
                code, said = dibs_check(topology.uri(), job, within)
                checks.append({"job": job, "within_ms": int(within[:-1]) * 1000, "ts": ts, "exit": code, "said": said})
                ledger.record(k="check", j=job, d=str(code), within=within, said=said)
        histories = {job: history.read(topology.masters(), job) for job in JOBS}
        with open(workdir / "history.json", "w") as out:  # what the checker read, for a post-mortem
            json.dump({job: [e.__dict__ for e in entries or []] for job, entries in histories.items()}, out, indent=1)
    finally:
        halt.set()
        for w in load.instances:
            w.finish(0)
        for host in load.cron:
            host.halt.set()
        topology.stop()
        ledger.close()
    return judge(ledger, wall0, end_ts, kind, histories, checks), nemesis, load, ledger


def up_windows(events, end_ts):
    """Per catch-up job, the times some instance of its front end was up and not paused."""
    fronts = {"h-catchup": "library", "s-catchup": "spring"}
    open_at, windows = {}, {job: [] for job in fronts}
    for e in events:
        if e.get("k") in ("up", "down"):
            for job, front in fronts.items():
                if e.get("f") != front:
                    continue
                key = (job, e["i"])
                if e["k"] == "up":
                    open_at[key] = e["ts"]
                elif key in open_at:
                    windows[job].append((open_at.pop(key), e["ts"]))
    for (job, _), start in open_at.items():
        windows[job].append((start, end_ts))
    return windows


def rejudge(directory):
    """The checker again, on what a finished run left in `directory` (its ledger and history)."""
    from types import SimpleNamespace

    events = [json.loads(line) for line in open(Path(directory) / "ledger.jsonl")]
    begin = next(e for e in events if e["k"] == "begin")
    end_ts = next(e["ts"] for e in events if e["k"] == "workload-end")
    saved = json.load(open(Path(directory) / "history.json"))
    histories = {}
    for job, entries in saved.items():
        histories[job] = []
        for fields in entries:
            entry = history.Entry(fields["id"], {"run": fields.get("raw", "")})
            histories[job].append(entry)
    checks = [{"job": e["j"], "within_ms": int(e["within"][:-1]) * 1000, "ts": e["ts"], "exit": int(e["d"])}
              for e in events if e["k"] == "check"]
    ledger = SimpleNamespace(events=events, path=Path(directory) / "ledger.jsonl")
    return judge(ledger, begin["wall0"], end_ts, begin["d"].split()[0], histories, checks)


def judge(ledger, wall0, end_ts, kind, histories, checks):
    c = checker.Checker(ledger.events, wall0, end_ts, kind)
    c.overlaps()
    c.tokens()
    c.at_most_once()
    c.exactly_once(up_windows(ledger.events, end_ts))
    c.run_processes()
    c.signals_passed_on()
    c.history(histories)
    c.signals(checks)
    health = [{"ts": e["ts"], "instance": "%s's %s" % (e["i"], e["k"]), "jobs": e["jobs"]}
              for e in ledger.events if e.get("k") in ("health", "gauge")]
    c.health(health, SPRING_PERIODS)
    return c
