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
import urllib.request
from pathlib import Path

from . import checker, faults, history, resp, servers, workload

JOBS = ["h-exec", "h-once", "h-catchup", "h-lease", "h-run", "s-once", "s-catchup", "s-shed"]
SPRING_PERIODS = {"s-once": 1000, "s-catchup": 2000, "s-shed": 1000}


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

    def start(self):
        for name in ("lib1", "lib2") if "library" in self.fronts else ():
            self.instances.append(workload.library(self.ledger, self.uri, name, self.seconds, self.seed,
                                                   self.logdir, self.skews.get(name)))
        for name in ("spring1", "spring2") if "spring" in self.fronts else ():
            self.instances.append(workload.spring(self.ledger, self.uri, name, self.logdir, self.seed))
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
            new = workload.spring(self.ledger, self.uri, name, self.logdir, self.seed + self.restarts)
        self.instances[self.instances.index(old)] = new

    def start_cron(self):
        for host in self.cron:
            host.start(self.seconds)


def health_jobs(doc):
    """{job: 'ok' | 'overdue' | 'unknown'} from /actuator/health's dibsJobs component."""
    component = (doc.get("components") or {}).get("dibsJobs") or {}
    details = component.get("details") or {}
    jobs = {}
    for job, detail in details.items():
        if not isinstance(detail, dict):
            continue
        state = str(detail.get("state") or detail.get("status") or "").lower()
        jobs[job] = "overdue" if "overdue" in state else "unknown" if "unknown" in state else "ok"
    return jobs


def poll_health(ledger, spring, halt):
    while not halt.wait(2.0):
        for w in spring:
            if not w.alive() or w.stopped:
                continue
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/actuator/health" % w.port, timeout=1.5) as r:
                    doc = json.loads(r.read())
            except Exception as e:  # a 503 (OUT_OF_SERVICE) still carries the document
                body = getattr(e, "read", lambda: b"")()
                try:
                    doc = json.loads(body)
                except ValueError:
                    continue
            ledger.record(k="health", i=w.name, jobs=health_jobs(doc), raw=json.dumps(doc)[:2000])


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
    load = Workload(ledger, topology.uri(), seed, seconds, workdir, fronts)
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


def judge(ledger, wall0, end_ts, kind, histories, checks):
    c = checker.Checker(ledger.events, wall0, end_ts, kind)
    c.overlaps()
    c.tokens()
    c.at_most_once()
    c.exactly_once(up_windows(ledger.events, end_ts))
    c.run_processes()
    c.history(histories)
    c.signals(checks)
    health = [{"ts": e["ts"], "instance": e["i"], "jobs": e["jobs"]} for e in ledger.events if e.get("k") == "health"]
    c.health(health, SPRING_PERIODS)
    return c
