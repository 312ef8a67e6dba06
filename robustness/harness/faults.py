"""The nemesis: a fault schedule drawn from a seed (the same seed draws the same kinds, moments
and parameters), and what injects each fault into the real processes. Targets that depend on the
run (which instance holds a lock at that moment) are drawn from the same seeded stream among the
candidates of the moment, so a replay hits the same kind of target, not always the same one."""

import os
import random
import re
import shutil
import signal
import subprocess
import threading
import time

from . import resp

# Fault kinds by topology; every workload fault applies to all.
WORKLOAD = ["pause-holder", "kill-holder", "signal-run", "cut-client"]
SERVER = {
    "single": ["restart-server", "freeze-server", "clock-back", "clock-forward"],
    "sentinel": ["kill-master", "freeze-master", "stall-replica", "clock-back", "clock-forward"],
    "cluster": ["kill-master", "freeze-master", "stall-replica", "clock-back"],
}
RUN_SIGNALS = [("TERM", False), ("INT", False), ("HUP", False), ("KILL", False),
               ("TERM", True), ("INT", True), ("HUP", True), ("KILL", True)]


def plan(seed, topology, seconds, every=6.0):
    """[(at, kind, params)], `at` in seconds from the workload's start."""
    rng = random.Random("%s/%s" % (seed, topology))
    kinds = WORKLOAD + SERVER[topology]
    faults, at = [], 6.0 + rng.uniform(0, 2)
    while at < seconds - 8:
        kind = rng.choice(kinds)
        params = {"pick": rng.random(), "length": round(rng.uniform(1.0, 4.0), 2)}
        if kind == "pause-holder":
            params["length"] = round(rng.uniform(6.0, 8.0), 2)  # past every job's atMost
        if kind == "signal-run":
            params["signal"], params["group"] = rng.choice(RUN_SIGNALS)
        if kind == "clock-back":
            params["step"] = "-%ds" % rng.randint(2, 6)
        if kind == "clock-forward":
            params["step"] = "+%ds" % rng.randint(3, 10)
        faults.append((round(at, 2), kind, params))
        at += rng.uniform(every * 0.6, every * 1.4)
    return faults


def sockets_of(pid):
    """The peer port and local port of every established TCP socket of process `pid`."""
    out = subprocess.run(["ss", "-tnpH", "state", "established"], capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        if "pid=%d," % pid not in line:
            continue
        parts = line.split()
        local, peer = parts[2], parts[3]
        found.append((int(peer.rsplit(":", 1)[1]), int(local.rsplit(":", 1)[1])))
    return found


class Nemesis:
    def __init__(self, ledger, topology, workload, seed, seconds):
        self.ledger, self.topology, self.workload = ledger, topology, workload
        self.schedule = plan(seed, topology.kind, seconds)
        self.done = []
        self.halt = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.t0 = time.monotonic()
        self.thread.start()

    def stop(self):
        self.halt.set()
        self.thread.join()

    def _run(self):
        for at, kind, params in self.schedule:
            if self.halt.wait(max(0.0, self.t0 + at - time.monotonic())):
                return
            self.ledger.record(k="fault", d=kind, phase="begin", params=params)
            try:
                target = getattr(self, "_" + kind.replace("-", "_"))(params)
            except Exception as e:  # a fault that could not be injected is reported, not fatal
                target = "not injected: %s" % e
            self.ledger.record(k="fault", d=kind, phase="end", target=str(target))
            self.done.append((kind, str(target)))

    def _pick(self, items, params):
        items = sorted(items, key=str)
        return items[int(params["pick"] * len(items))] if items else None

    # --- the workload's processes ---
    def _live_jvms(self):
        return [w for w in self.workload.instances if w.alive() and not w.stopped]

    def _holders(self):
        """Instances in a task now (a start without its end in the ledger), by name."""
        open_runs = {}
        for e in list(self.ledger.events):
            if e.get("k") == "start":
                open_runs[e.get("r")] = e.get("i")
            elif e.get("k") == "end":
                open_runs.pop(e.get("r"), None)
        return set(open_runs.values())

    def _pause_holder(self, params):
        jvms = self._live_jvms()
        holding = [w for w in jvms if w.name in self._holders()] or jvms
        runs = self._active_runs(wait=0)
        target = self._pick(holding + ["run " + c for c in runs], params)
        if target is None:
            return "no instance"
        if isinstance(target, str):  # dibs run itself, not its CMD: its watchdog must end CMD in time
            call = target.split()[1]
            try:
                runs[call].send_signal(signal.SIGSTOP)
                self.halt.wait(params["length"])
                runs[call].send_signal(signal.SIGCONT)
            except ProcessLookupError:
                return "%s ended first" % target
            return "%s for %.1f s" % (target, params["length"])
        target.signal(signal.SIGSTOP)
        self.halt.wait(params["length"])
        target.signal(signal.SIGCONT)
        return "%s for %.1f s" % (target.name, params["length"])

    def _kill_holder(self, params):
        jvms = self._live_jvms()
        holding = [w for w in jvms if w.name in self._holders()] or jvms
        target = self._pick(holding, params)
        if target is None:
            return "no instance"
        target.signal(signal.SIGKILL)
        target.proc.wait()
        self.halt.wait(1.0)
        self.workload.restart(target)
        return target.name + ", restarted"

    def _active_runs(self, wait=2.0):
        """The `dibs run` processes running now: waits up to `wait` s for one (each runs about half
        of each second)."""
        deadline = time.monotonic() + wait
        while True:
            runs = {}
            for host in self.workload.cron:
                runs.update(host.active())
            if runs or time.monotonic() > deadline or self.halt.wait(0.05):
                return runs

    def _signal_run(self, params):
        runs = self._active_runs()
        call = self._pick(list(runs), params)
        if call is None:
            return "no dibs run"
        proc = runs[call]
        sig = getattr(signal, "SIG" + params["signal"])
        try:
            if params["group"]:
                os.killpg(proc.pid, sig)
            else:
                proc.send_signal(sig)
        except ProcessLookupError:
            return "%s ended first" % call
        return "SIG%s to %s%s" % (params["signal"], call, "'s group" if params["group"] else "")

    def _cut_client(self, params):
        target = self._pick(self._live_jvms(), params)
        if target is None:
            return "no instance"
        ports = {s.port: s for s in self.topology.servers if s.alive() and not s.frozen}
        cut = 0
        for peer, local in sockets_of(target.proc.pid):
            server = ports.get(peer)
            if server is not None:
                try:
                    cut += resp.call(server.port, "CLIENT", "KILL", "ADDR", "127.0.0.1:%d" % local)
                except (OSError, resp.RespError, ConnectionError):
                    pass
        return "%s: %d connections" % (target.name, cut)

    # --- the servers ---
    def _master(self, params):
        masters = self.topology.masters()
        return self._pick(masters, params)

    def _restart_server(self, params):
        server = self.topology.server
        server.kill()
        self.halt.wait(params["length"] / 2)
        server.start()
        return "%s, empty, after %.1f s" % (server.name, params["length"] / 2)

    def _freeze_server(self, params):
        return self._freeze(self.topology.server, params)

    def _freeze_master(self, params):
        return self._freeze(self._master(params), params)

    def _freeze(self, server, params):
        if server is None:
            return "no master"
        server.freeze()
        self.halt.wait(params["length"])
        server.thaw()
        return "%s for %.1f s" % (server.name, params["length"])

    def _kill_master(self, params):
        server = self._master(params)
        if server is None:
            return "no master"
        server.kill()
        self.halt.wait(params["length"] + 3)  # Sentinel's or the cluster's failover, then back
        server.start()
        return "%s, back as an empty node after %.1f s" % (server.name, params["length"] + 3)

    def _clock_back(self, params):
        return self._clock(params)

    def _clock_forward(self, params):
        return self._clock(params)

    def _clock(self, params):
        server = self._master(params)
        if server is None:
            return "no master"
        server.step_clock(params["step"])
        self.halt.wait(params["length"])
        server.step_clock("+0s")
        return "%s %s for %.1f s" % (server.name, params["step"], params["length"])

    def _stall_replica(self, params):
        master = self._master(params)
        if master is None:
            return "no master"
        listing = resp.text(resp.call(master.port, "CLIENT", "LIST", "TYPE", "replica"))
        links = [int(m) for m in re.findall(r"addr=127\.0\.0\.1:(\d+)", listing)]
        link = self._pick(links, params)
        if link is None:
            return "%s has no replica" % master.name
        with LoopbackStall(master.port, link):
            self.halt.wait(params["length"])
        return "%s -> link %d for %.1f s" % (master.name, link, params["length"])


class LoopbackStall:
    """Drops the segments from a master's port to one replica's link port on `lo` (tc, cls_bpf in
    direct-action mode; ../shared/faults/README.md): the replica misses writes and stays healthy."""

    def __init__(self, master_port, link_port):
        self.program = ("13,40 0 0 12,21 0 10 2048,48 0 0 23,21 0 8 6,40 0 0 20,69 6 0 8191,"
                        "177 0 0 14,72 0 0 14,21 0 3 %d,72 0 0 16,21 0 1 %d,6 0 0 2,6 0 0 0"
                        % (master_port, link_port))

    TC = shutil.which("tc") or "/usr/sbin/tc"

    def __enter__(self):
        subprocess.run([self.TC, "qdisc", "add", "dev", "lo", "clsact"], capture_output=True)
        subprocess.run([self.TC, "filter", "add", "dev", "lo", "egress", "protocol", "ip", "prio", "1",
                        "bpf", "da", "bytecode", self.program], check=True, capture_output=True)

    def __exit__(self, *exc):
        subprocess.run([self.TC, "qdisc", "del", "dev", "lo", "clsact"], capture_output=True)
