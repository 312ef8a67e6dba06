"""The instances of the workload, each a process of its own, of every front end a user has:
JVMs on the library (robustness/workers: LibraryWorker), Spring Boot applications on the starter
with a ShedLock job (SpringWorker), and cron hosts that start `dibs run --tick` each second, whose
CMD (robustness/task.sh) forks a child."""

import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

from .servers import FAKETIME, free_port

ROOT = Path(__file__).resolve().parents[2]
JVM_FLAGS = ["-XX:+UseSerialGC", "-Xmx192m", "-XX:TieredStopAtLevel=1", "-Duser.timezone=UTC",
             "--enable-native-access=ALL-UNNAMED"]
RUN_AT_MOST = "4s"


def classpath():
    workers = ROOT / "robustness/workers/target"
    listed = workers / "classpath.txt"
    if not listed.exists():
        raise RuntimeError("robustness/workers is not built: mvn -pl robustness/workers -am package -DskipTests")
    return "%s:%s" % (workers / "classes", listed.read_text().strip())


def skewed_env(skew):
    """An environment whose wall clock runs `skew` (libfaketime: '+1.5s', '-2s') off the machine's."""
    env = dict(os.environ)
    if skew and FAKETIME:
        env.update(LD_PRELOAD=FAKETIME, FAKETIME=skew, FAKETIME_DONT_FAKE_MONOTONIC="1")
    return env


class Instance:
    """One worker process, in a process group of its own (a fault signals the group)."""

    def __init__(self, name, front, argv, log, env):
        self.name, self.front, self.log = name, front, log
        self.out = open(log, "w")
        self.proc = subprocess.Popen(argv, stdout=self.out, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)
        self.stopped = False

    def __str__(self):
        return self.name

    def ready(self):
        return "READY" in Path(self.log).read_text(errors="replace")

    def alive(self):
        return self.proc.poll() is None

    def signal(self, sig):
        if self.alive():
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass
        self.stopped = sig == signal.SIGSTOP or (self.stopped and sig != signal.SIGCONT)

    def finish(self, seconds):
        """Waits up to `seconds` for it to end by itself, then kills it."""
        self.signal(signal.SIGCONT)
        try:
            self.proc.wait(seconds)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.proc.wait()
        self.out.close()


def library(ledger, uri, name, seconds, seed, logdir, skew=None):
    argv = ["java", *JVM_FLAGS, "-cp", classpath(), "dibs.robustness.LibraryWorker", name, uri,
            ledger.url, str(seconds), str(seed)]
    return Instance(name, "library", argv, logdir / (name + ".log"), skewed_env(skew))


def spring_connection(uri):
    """The starter's documented properties for a topology's URI."""
    if uri.startswith("redis+sentinel://"):
        nodes, master = uri[len("redis+sentinel://"):].split("/")
        return ["--spring.data.redis.sentinel.master=" + master, "--spring.data.redis.sentinel.nodes=" + nodes]
    if uri.startswith("redis+cluster://"):
        return ["--spring.data.redis.cluster.nodes=" + uri[len("redis+cluster://"):]]
    return ["--spring.data.redis.url=" + uri]


# The Spring workers' zone (HarnessZone.java): from its anchor, a fall-back of SHIFT_S every
# 2 * EVERY_S seconds, and a spring-forward of as much EVERY_S after each.
ZONE_EVERY_S, ZONE_SHIFT_S = 20, 4


def zone_changes(anchor_s, a_s, b_s):
    """(fall-backs, spring-forwards) of the harness's zone between epoch seconds a_s and b_s."""
    changes = [k for k in range(int((b_s - anchor_s) // ZONE_EVERY_S) + 1) if a_s <= anchor_s + k * ZONE_EVERY_S <= b_s]
    return sum(1 for k in changes if k % 2 == 0), sum(1 for k in changes if k % 2 == 1)


def spring(ledger, uri, name, logdir, seed, anchor, skew=None):
    port = free_port()
    argv = ["java", *JVM_FLAGS, "-cp", classpath(), "dibs.robustness.SpringWorker",
            "--server.port=%d" % port, "--dibs.harness.instance=" + name, "--dibs.harness.seed=%s" % seed,
            "--dibs.harness.dst-anchor=%d" % anchor,
            "--dibs.harness.ledger=" + ledger.url, *spring_connection(uri)]
    instance = Instance(name, "spring", argv, logdir / (name + ".log"), skewed_env(skew))
    instance.port = port
    return instance


def dibs_binary():
    return str(ROOT / "target/debug/dibs")


class CronHost:
    """A host whose cron starts `dibs run --tick T` on every second T, up to 200 ms late; each run
    is its own process group, as cron starts it. The ledger gets `call` at the start and `exit`
    (with the exit code, negative for a signal) when it ends."""

    def __init__(self, ledger, uri, name, seed, skew=None):
        self.ledger, self.uri, self.name = ledger, uri, name
        self.random = random.Random(seed)
        self.env = skewed_env(skew)
        self.env.update(HARNESS_LEDGER=ledger.url, HARNESS_INSTANCE=name)
        self.running = {}  # call -> Popen
        self.lock = threading.Lock()
        self.halt = threading.Event()
        self.count = 0
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def start(self, seconds):
        self.until = time.time() + seconds
        self.thread.start()

    def _loop(self):
        tick = int(time.time()) + 1
        while not self.halt.is_set() and tick < self.until:
            delay = tick + self.random.uniform(0, 0.2) - time.time()
            if self.halt.wait(max(0.0, delay)):
                break
            self._fire(tick)
            tick += 1

    def _fire(self, tick):
        self.count += 1
        call = "%s-%d" % (self.name, self.count)
        env = dict(self.env, HARNESS_CALL=call, HARNESS_TICK=str(tick), HARNESS_DUE=str(tick * 1000))
        argv = [dibs_binary(), "run", "--redis", self.uri, "--redis-opt", "instance-id=" + self.name,
                "--lock", "h-run", "--tick", str(tick), "--at-most", RUN_AT_MOST, "--keep-alive",
                "--on-lost", "0s", "--", "bash", str(ROOT / "robustness/task.sh")]
        self.ledger.record(k="call", i=self.name, f="run", j="h-run", l="h-run@%d" % tick,
                           t=str(tick), due=str(tick * 1000), c=call)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                start_new_session=True)
        with self.lock:
            self.running[call] = proc
        threading.Thread(target=self._reap, args=(call, proc, tick), daemon=True).start()

    def _reap(self, call, proc, tick):
        err = proc.stderr.read().decode(errors="replace").strip().replace("\n", " | ")
        code = proc.wait()
        self.ledger.record(k="exit", i=self.name, f="run", j="h-run", l="h-run@%d" % tick,
                           t=str(tick), c=call, d=str(code), err=err[-300:])
        with self.lock:
            self.running.pop(call, None)

    def active(self):
        with self.lock:
            return dict(self.running)

    def stop(self):
        self.halt.set()
        self.thread.join()
        deadline = time.time() + 20
        while self.active() and time.time() < deadline:
            time.sleep(0.1)
        for proc in self.active().values():
            os.killpg(proc.pid, signal.SIGKILL)
