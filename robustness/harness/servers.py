"""The topologies the harness runs on: one server, a master with 2 replicas behind 3 Sentinels, and
a Cluster of 3 masters with a replica each. Every server is a plain process on a free loopback
port, started from the suite's builds (scripts/redis-servers.sh: MALLOC=libc, so that libfaketime
can step its clock, which Debian's build refuses), without persistence, and with its clock read
from a file that a fault can step."""

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from . import resp

FAKETIME = next(
    (str(p) for p in Path("/usr/lib").glob("*/faketime/libfaketime.so.1")), None
)


def free_port(below=65536):
    """A free loopback port under `below`, and, under it, with the port 10,000 above it free too (a
    cluster node's bus)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if below == 65536:
            return port
        if port < below:
            with socket.socket() as bus:
                try:
                    bus.bind(("127.0.0.1", port + 10000))
                    return port
                except OSError:
                    continue


def wait_for(what, seconds, probe):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if probe():
                return
        except (OSError, resp.RespError, ConnectionError):
            pass
        time.sleep(0.05)
    raise TimeoutError("waited %.0f s for %s" % (seconds, what))


class Server:
    """One redis-server process. Its clock is the file `clock` (libfaketime's offset)."""

    def __init__(self, binary, workdir, name, extra=()):
        self.binary = binary
        self.dir = Path(workdir) / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.extra = list(extra)
        # a cluster node's bus listens 10,000 above its port
        self.port_limit = 55536 if "--cluster-enabled" in extra else 65536
        self.port = free_port(self.port_limit)
        self.clock = self.dir / "clock"
        self.clock.write_text("+0s\n")
        self.proc = None
        self.frozen = False

    def __str__(self):
        return self.name

    def args(self):
        return [
            self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
            "--save", "", "--appendonly", "no", "--enable-debug-command", "yes",
            "--logfile", str(self.dir / "server.log"), *self.extra,
        ]

    def start(self, tries=3):
        """Starts it; a first start whose port was taken meanwhile (by another node's bus) takes
        another port, a restart keeps its own."""
        env = dict(os.environ)
        if FAKETIME:
            env.update(LD_PRELOAD=FAKETIME, FAKETIME_TIMESTAMP_FILE=str(self.clock),
                       FAKETIME_NO_CACHE="1", FAKETIME_DONT_FAKE_MONOTONIC="1")
        first = self.proc is None
        self.proc = subprocess.Popen(self.args(), env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        self.frozen = False
        try:
            wait_for("%s to answer" % self.name, 15,
                     lambda: self.proc.poll() is not None or resp.call(self.port, "PING") == "PONG")
        except TimeoutError:
            self.stop()
            raise
        if self.proc.poll() is not None:
            if not first or tries <= 1:
                raise RuntimeError("%s exited at start: see %s" % (self.name, self.dir / "server.log"))
            self.port = free_port(self.port_limit)
            self.proc = None
            self.start(tries - 1)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        self.frozen = False

    def freeze(self):
        if self.alive():
            self.proc.send_signal(signal.SIGSTOP)
            self.frozen = True

    def thaw(self):
        if self.alive():
            self.proc.send_signal(signal.SIGCONT)
        self.frozen = False

    def step_clock(self, offset):
        """Moves this server's clock: '+0s' is the machine's, '-3s' three seconds behind."""
        self.clock.write_text(offset + "\n")

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()


class Single:
    """One server: a restart loses every lock (documented)."""

    kind = "single"

    def __init__(self, binary, workdir):
        self.server = Server(binary, workdir, "redis")
        self.servers = [self.server]

    def start(self):
        self.server.start()

    def uri(self):
        return "redis://127.0.0.1:%d" % self.server.port

    def masters(self):
        return [self.server] if self.server.alive() else []

    def stop(self):
        self.server.stop()


class SentinelGroup:
    """A master, 2 replicas, 3 Sentinels (quorum 2, down after 1 s)."""

    kind = "sentinel"

    def __init__(self, binary, workdir):
        self.binary = binary
        self.workdir = Path(workdir)
        self.servers = [Server(binary, workdir, "node%d" % i) for i in range(3)]
        self.sentinels = []

    def start(self):
        master = self.servers[0]
        master.start()
        for replica in self.servers[1:]:
            replica.extra = ["--replicaof", "127.0.0.1", str(master.port)]
            replica.start()
        wait_for("the replicas to sync", 20, lambda: all(
            resp.info(r.port).get("master_link_status") == "up" for r in self.servers[1:]))
        for i in range(3):
            port = free_port()
            d = self.workdir / ("sentinel%d" % i)
            d.mkdir(parents=True, exist_ok=True)
            conf = d / "sentinel.conf"
            conf.write_text(
                "port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"
                "sentinel monitor mymaster 127.0.0.1 %d 2\n"
                "sentinel down-after-milliseconds mymaster 1000\n"
                "sentinel failover-timeout mymaster 3000\n"
                "sentinel parallel-syncs mymaster 1\n" % (port, d, d / "sentinel.log", master.port))
            proc = subprocess.Popen([self.binary, str(conf), "--sentinel"], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True)
            self.sentinels.append((port, proc))
        wait_for("the Sentinels to see both replicas", 20, lambda: all(
            len(resp.call(p, "SENTINEL", "replicas", "mymaster")) == 2 for p, _ in self.sentinels))
        # A node restarted after a kill comes back as a plain master; Sentinel makes it a replica.
        for replica in self.servers[1:]:
            replica.extra = []

    def uri(self):
        return "redis+sentinel://%s/mymaster" % ",".join("127.0.0.1:%d" % p for p, _ in self.sentinels)

    def master_port(self):
        for port, _ in self.sentinels:
            try:
                reply = resp.call(port, "SENTINEL", "get-master-addr-by-name", "mymaster", timeout=0.5)
                return int(reply[1])
            except (OSError, resp.RespError, ConnectionError, TypeError):
                continue
        return None

    def masters(self):
        port = self.master_port()
        return [s for s in self.servers if s.port == port and s.alive()]

    def stop(self):
        for _, proc in self.sentinels:
            proc.kill()
            proc.wait()
        for s in self.servers:
            s.stop()


class Cluster:
    """3 masters with a replica each (node timeout 2 s)."""

    kind = "cluster"

    def __init__(self, binary, workdir):
        self.binary = binary
        self.cli = str(Path(binary).with_name("redis-cli"))
        extra = ["--cluster-enabled", "yes", "--cluster-node-timeout", "2000",
                 "--cluster-config-file", "nodes.conf"]
        self.servers = [Server(binary, workdir, "node%d" % i, extra) for i in range(6)]

    def start(self):
        for s in self.servers:
            s.start()
        subprocess.run([self.cli, "--cluster", "create",
                        *["127.0.0.1:%d" % s.port for s in self.servers],
                        "--cluster-replicas", "1", "--cluster-yes"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for("the cluster to settle", 30, self.settled)

    def nodes(self, port):
        return [l.split() for l in resp.text(resp.call(port, "CLUSTER", "NODES", timeout=0.5)).splitlines()]

    def settled(self):
        for s in self.servers:
            lines = self.nodes(s.port)
            masters = [l for l in lines if "master" in l[2] and "fail" not in l[2] and len(l) > 8]
            replicas = [l for l in lines if "slave" in l[2] and "fail" not in l[2]]
            if len(masters) != 3 or len(replicas) != 3:
                return False
            if "cluster_state:ok" not in resp.text(resp.call(s.port, "CLUSTER", "INFO", timeout=0.5)):
                return False
        return True

    def uri(self):
        return "redis+cluster://%s" % ",".join("127.0.0.1:%d" % s.port for s in self.servers[:3])

    def masters(self):
        found = []
        for s in self.servers:
            if not s.alive() or s.frozen:
                continue
            try:
                if resp.info(s.port).get("role") == "master":
                    found.append(s)
            except (OSError, resp.RespError, ConnectionError):
                pass
        return found

    def stop(self):
        for s in self.servers:
            s.stop()


TOPOLOGIES = {"single": Single, "sentinel": SentinelGroup, "cluster": Cluster}


def suite_server():
    """The suite's Redis 7.4.1 build (built once by scripts/redis-servers.sh)."""
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(["bash", str(root / "scripts/redis-servers.sh")], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        label, path = line.split(" ", 1)
        if label == "redis-7.4.1":
            return str(Path(path) / "redis-server")
    raise RuntimeError("scripts/redis-servers.sh listed no redis-7.4.1")
