"""The checker: judges a finished run from the ledger (what every task did, on one clock), the
fenced store's answers, dibs's history as read from Redis, and what dibs said (`dibs check`, the
starter's health). It is written apart from dibs: the rules below are the lock's promises as
docs/reliability.md states them, not dibs's code.

A run is what one task did under one grant: its `start`, its writes, its `end` (missing when it
was killed). Its interval is from its start to its last event: it surely ran then. Documented
limits are not violations but are counted, each with its reason: a server restarted without
persistence (locks and history lost), a server's clock stepped back (tokens may not increase),
a failover (a release's record may be lost)."""

import re
from collections import defaultdict

TICK_JOBS = {"h-once", "h-catchup", "s-once", "s-catchup", "h-run"}
# Ticks without catch-up: a tick's lock is its done mark for atMost, and "instances whose schedulers
# fire the same tick up to atMost apart run it once" (docs/guide.md): a fire later than that may run
# it again. With catch-up the history is the proof, and no fire may.
DONE_MARK_MS = {"h-once": 5000, "s-once": 5000, "h-run": 4000}
CATCH_UP_ALL = {"h-catchup": 2000, "s-catchup": 1000}  # job -> tick period, ms
CATCH_UP_WINDOW_MS = 30000  # both look back 30 s (15 ticks; 30 with @CatchUp window PT30S)
RUN_AT_MOST_MS = 4000
# Faults that may take what a server acknowledged with them: a restart without persistence, a
# failover (a frozen master is failed over too), and those that may cut a release's reply.
DATA_LOSS = {"restart-server", "kill-master", "freeze-master"}
# A lock taken on a master that a failover is leaving may be acknowledged by the replica that is not
# promoted, and lost (docs/reliability.md, "What a failover can lose"): within this of the fault.
FAILOVER = {"kill-master", "freeze-master"}
FAILOVER_MS = 8000
RELEASE_FAULTS = DATA_LOSS | {"cut-client", "clock-back", "clock-forward", "freeze-server", "pause-holder",
                              "kill-holder", "signal-run"}
SLACK_MS = 150
CLOCK_STEP_MAX_MS = 10000
# Jobs locked by their own name, with their atMost: the starter calls one on time while its lock is
# held ("running"), which a run, an acquire whose reply a fault lost, or a holder that died does
# alike until atMost (dibs-spring-boot-starter/README.md, "The fleet view").
OWN_NAME_AT_MOST_MS = {"s-shed": 4000}
REFRESH_MS = 2500  # the starter's view of the jobs, refreshed every 2 s (dibs.jobs.refresh)  # the nemesis steps a server's clock by at most 10 s  # an HTTP event in flight when its process was stopped


class Run:
    def __init__(self, r):
        self.r, self.events, self.writes = r, [], []
        self.start = self.end = self.last = None
        self.ok = False

    def add(self, e):
        self.events.append(e)
        self.last = e["ts"] if self.last is None else max(self.last, e["ts"])
        k = e["k"]
        if k == "start":
            self.start = e["ts"]
            for f in ("i", "f", "j", "l", "t", "c"):
                setattr(self, f, e.get(f, ""))
            self.due = int(e.get("due") or 0)
            self.tok = int(e.get("tok") or 0)
        elif k == "write":
            self.writes.append((e["ts"], e.get("d") == "accepted"))
        elif k == "end":
            self.end = e["ts"]
            self.ok = e.get("d") == "ok"


class Checker:
    def __init__(self, events, wall0_ms, end_ts, topology):
        self.events, self.wall0, self.end_ts, self.topology = events, wall0_ms, end_ts, topology
        self.violations, self.excused = [], defaultdict(int)
        self.calls = {}
        self.runs = {}
        for e in events:
            if e.get("k") == "call":
                self.calls[e["c"]] = e
            elif e.get("k") in ("start", "write", "end", "lost", "child-end") and e.get("r"):
                self.runs.setdefault(e["r"], Run(e["r"])).add(e)
        self.runs = {r: run for r, run in self.runs.items() if run.start is not None}
        self.faults = self._faults()

    def _faults(self):
        begun, windows = {}, []
        for e in self.events:
            if e.get("k") != "fault":
                continue
            if e.get("phase") == "begin":
                begun[e["d"]] = e["ts"]
            else:
                windows.append((e["d"], begun.pop(e["d"], e["ts"]), e["ts"], e.get("target", "")))
        return windows

    def during(self, kinds, a, b, margin=0):
        """A fault of `kinds` whose window meets [a - margin, b + margin]."""
        return any(k in kinds and s <= b + margin and e >= a - margin for k, s, e, _ in self.faults)

    def successes(self, job):
        """When each run of `job` whose task ended ok ended."""
        return [r.end for r in self.runs.values() if r.j == job and r.ok and r.end is not None]

    def flag(self, kind, lock, ts, message):
        self.violations.append({"kind": kind, "lock": lock, "ts": ts, "message": message})

    def by_lock(self):
        locks = defaultdict(list)
        for run in self.runs.values():
            locks[run.l].append(run)
        for runs in locks.values():
            runs.sort(key=lambda r: r.start)
        return locks

    # 1. no two runs of one lock overlap, unless the later one's token is greater and the store
    #    refused every write of the earlier one after the later one's first accepted write
    def overlaps(self):
        for lock, runs in self.by_lock().items():
            for i, a in enumerate(runs):
                for b in runs[i + 1:]:
                    if b.start > a.last:
                        break
                    firsts = [ts for ts, ok in b.writes if ok]
                    fenced = b.tok > a.tok and all(not ok for ts, ok in a.writes if firsts and ts > firsts[0])
                    if fenced:
                        self.excused["overlap fenced (a holder outlived its lock; the store refused it)"] += 1
                    elif self.during({"restart-server"}, a.start, b.start):
                        self.excused["overlap across a restart without persistence"] += 1
                    else:
                        self.flag("overlap", lock, b.start,
                                  "%s (token %d, %.0f-%.0f ms) and %s (token %d) ran at once; writes of the "
                                  "first after the second's: %s" % (a.r, a.tok, a.start, a.last, b.r, b.tok,
                                                                    [(ts, ok) for ts, ok in a.writes if ts > b.start]))

    # 2. per lock, tokens increase in grant order (known when one's start precedes the other's call)
    def tokens(self):
        for lock, runs in self.by_lock().items():
            for a in runs:
                if a.tok <= 0:
                    self.flag("token", lock, a.start, "%s ran with fencing token %d" % (a.r, a.tok))
            for i, a in enumerate(runs):
                for b in runs[i + 1:]:
                    call = self.calls.get(b.c)
                    if call is None or a.start >= call["ts"] or b.tok > a.tok:
                        continue
                    # a step back, or the end of a step forward, which steps the clock back
                    if self.during({"clock-back", "clock-forward"}, a.start - 1000 - CLOCK_STEP_MAX_MS, b.start):
                        self.excused["token not greater after a server's clock stepped back"] += 1
                        continue
                    self.flag("token", lock, b.start, "%s was granted after %s ended its start, with token %d "
                              "not greater than %d" % (b.r, a.r, b.tok, a.tok))

    # 3. each tick runs at most once
    def at_most_once(self):
        ticks = defaultdict(list)
        for run in self.runs.values():
            if run.j in TICK_JOBS:
                ticks[(run.j, run.due)].append(run)
        for (job, due), runs in ticks.items():
            if len(runs) < 2:
                continue
            runs.sort(key=lambda r: r.start)
            if self.during({"restart-server"}, runs[0].start, runs[-1].start):
                self.excused["tick run twice across a restart without persistence"] += 1
                continue
            if any(k in FAILOVER and s - 2000 <= runs[0].start <= e + FAILOVER_MS for k, s, e, _ in self.faults):
                self.excused["tick run again: a failover lost its first run's lock and start"] += 1
                continue
            # a server's clock stepped ahead expires a done mark early (Redis keys expire by the
            # wall clock): without catch-up, a later fire may take the tick again
            if job in DONE_MARK_MS and self.during({"clock-forward"}, runs[0].start, runs[-1].start):
                self.excused["tick without catch-up run again: a server's clock stepped ahead past its done mark"] += 1
                continue
            # granted more than atMost after the first: by the ledger (its call came later than that),
            # or by the server's clock (the tokens are its TIME at each grant)
            late = all(self.calls.get(r.c, {}).get("ts", 0) > runs[0].start + DONE_MARK_MS.get(job, 0)
                       or (r.tok - runs[0].tok) / 1000 > DONE_MARK_MS.get(job, 0) for r in runs[1:])
            if job in DONE_MARK_MS and late:
                self.excused["tick fired again more than atMost after its run (no catch-up)"] += 1
                continue
            self.flag("tick twice", "%s@%d" % (job, due), runs[1].start, "tick due %d of %s ran %d times: %s" % (
                due, job, len(runs), ", ".join("%s on %s (token %d)" % (r.r, r.i, r.tok) for r in runs)))

    # 4. with catch-up all, every tick due while an instance was up runs exactly once
    def exactly_once(self, up_windows):
        for job, period in CATCH_UP_ALL.items():
            ran = {r.due for r in self.runs.values() if r.j == job}
            if not ran:
                continue
            first = min(ran)
            # calls of the job that went through (ran or skipped, not failed): each could catch up
            # the ticks of its window (30 s) that had not run
            fronts = {r.f for r in self.runs.values() if r.j == job}
            through = [e["ts"] for e in self.events if e.get("k") == "outcome" and e.get("f") in fronts
                       and not e.get("d", "").startswith("error")]
            for due in range(first - first % period + period, int(self.wall0 + self.end_ts), period):
                ts = due - self.wall0
                if due in ran or not any(a <= ts <= b for a, b in up_windows.get(job, [])):
                    continue
                if not any(ts + period < t < ts + CATCH_UP_WINDOW_MS - period for t in through):
                    self.excused["tick due when no later call went through in its window"] += 1
                    continue
                if self.during({"restart-server", "clock-back", "clock-forward"}, ts - 30000, ts + 30000):
                    self.excused["tick not caught up near a data loss or clock step (unprovable)"] += 1
                    continue
                self.flag("tick missed", "%s@%d" % (job, due), ts, "tick due %d of %s (catch-up all) never ran, "
                          "with an instance up" % (due, job))

    # 5. nothing a `dibs run` CMD started is alive after its lock was released or expired
    def run_processes(self):
        exits = {e["c"]: e for e in self.events if e.get("k") == "exit"}
        pauses = [(s, t) for k, s, e, t in self.faults if k == "pause-holder" and t.startswith("run ")]
        for run in self.runs.values():
            if run.f != "run":
                continue
            exit_event = exits.get(run.c)
            if exit_event is not None:
                code = int(exit_event.get("d", "0"))
                bound = exit_event["ts"] + (RUN_AT_MOST_MS if code == -9 else SLACK_MS)
                if run.last > bound:
                    self.flag("orphan", run.l, run.last, "a process of %s's CMD made an event %.0f ms after dibs "
                              "exited (%d)" % (run.c, run.last - exit_event["ts"], code))
            for begin, target in pauses:
                # a lock taken before the stop lapses within --at-most of it; one taken after, later
                if target.split()[1] == run.c and run.start < begin and run.last > begin + RUN_AT_MOST_MS + SLACK_MS:
                    self.flag("orphan", run.l, run.last, "%s's CMD ran on %.0f ms after dibs was stopped "
                              "(its lock lapses within --at-most)" % (run.c, run.last - begin))

    # 5b. a signal to dibs run reaches all its CMD started ("signals are passed on to all it
    #     started", README): what CMD runs makes no event after it, but one already on its way
    def signals_passed_on(self):
        sent = {}
        for kind, begin, end, target in self.faults:
            # not SIGINT: a shell without job control starts its background jobs (task.sh's child)
            # with SIGINT ignored, whoever sends it
            m = re.match(r"SIG(TERM|HUP) to (\S+?)('s group)?$", target)
            if kind == "signal-run" and m:
                sent[m.group(2)] = (m.group(1), end)
        for run in self.runs.values():
            if run.f == "run" and run.c in sent:
                sig, at = sent[run.c]
                late = [e["ts"] for e in run.events if e["ts"] > at + SLACK_MS]
                if late:
                    self.flag("signal", run.l, late[0], "a process of %s's CMD made %d events up to %.0f ms after "
                              "SIG%s reached dibs" % (run.c, len(late), late[-1] - at, sig))

    # 6. the history and the ledger agree
    def history(self, histories):
        for job, entries in histories.items():
            if entries is None:
                self.excused["history unreadable at the end (no master answered)"] += 1
                continue
            entries = [e for e in entries if e.valid]
            by_fence = {e.fence: e for e in entries}
            oldest = entries[0].ms - self.wall0 if entries else None
            for run in (r for r in self.runs.values() if r.j == job):
                entry = by_fence.get(run.tok)
                if entry is None:
                    if oldest is None or run.start < oldest + 2000:
                        self.excused["run older than the trimmed history"] += 1
                    elif self.during(DATA_LOSS, run.start - 5000, run.last + 5000):
                        self.excused["run lost from the history by a restart or a failover"] += 1
                    elif job in TICK_JOBS:  # a tick's start is written with its lock, before its task
                        self.flag("history", run.l, run.last, "%s ran tick %s but the history has no entry of it"
                                  % (run.r, run.t))
                    elif self.during(RELEASE_FAULTS, run.start, run.last + 5000):
                        self.excused["run not recorded: its release met a fault"] += 1
                    elif run.end is None:
                        self.excused["run killed mid-task, not recorded (no start entry for a non-tick lock)"] += 1
                    else:
                        self.flag("history", run.l, run.last, "%s ended %s but is not in %s's history"
                                  % (run.r, "ok" if run.ok else "without ok", job))
                    continue
                # what became of the lock: released or kept means it was still this run's. A run whose
                # call began after this one's task started was granted after it: if it started
                # before this one ended, this one's lock was gone by its release
                later = [b for b in self.runs.values()
                         if b.l == run.l and b is not run and run.end is not None and b.start < run.end
                         and self.calls.get(b.c, {}).get("ts", -1) > run.start]
                if entry.ended in ("released", "kept") and later:
                    self.flag("history", run.l, run.end, "the history says %s %s its lock, but %s held it by "
                              "then (token %d): %r" % (run.r, entry.ended, later[0].r, later[0].tok, entry))
                succeeded = entry.task.startswith("ok")
                if succeeded and not run.ok:
                    self.flag("history", run.l, run.last, "the history says %s succeeded; its task never ended: %r"
                              % (run.r, entry))
                elif run.ok and entry.task.startswith("failed"):
                    self.flag("history", run.l, run.last, "the history says %s failed; its task ended ok: %r"
                              % (run.r, entry))
            known = {r.tok for r in self.runs.values()}
            started = {r.c for r in self.runs.values()}
            killed_runs = {e.get("l") for e in self.events if e.get("k") == "exit" and e.get("c") not in started
                           and int(e.get("d") or 0) not in (0, 69)}
            for e in entries:
                if e.fence in known or e.fence <= 0 or e.ms - self.wall0 <= 0:
                    continue
                if e.ended in ("started", "taken-back"):  # task unknown: no claim that it ran
                    self.excused["a start recorded whose task never began (task unknown in the history)"] += 1
                    continue
                if e.task.startswith("failed") and e.name in killed_runs:
                    self.excused["a CMD killed by a signal before it reported its start, recorded failed"] += 1
                    continue
                self.flag("history", job, e.ms - self.wall0, "the history has a run no task made: %r" % e)

    # 7. no false signal: dibs check's exit codes against the ledger
    def signals(self, checks):
        for c in checks:
            job, at, within = c["job"], c["ts"], c["within_ms"]
            if self.during({"clock-forward"}, at - CLOCK_STEP_MAX_MS - within, at):
                self.excused["a job's age judged from runs a server dated ahead (clock stepped forward)"] += 1
                continue
            oks = self.successes(job)
            surely_ran = any(at - within + 2000 <= t <= at for t in oks)
            surely_not = not any(at - within - 2000 <= t <= at for t in oks)
            if c["exit"] == 1 and surely_ran:
                self.flag("false signal", job, at, "dibs check said overdue (1) for --within %d ms; the ledger has "
                          "a success %.0f ms before" % (within, at - max(oks)))
            if c["exit"] == 0 and surely_not:
                self.flag("false signal", job, at, "dibs check said ok (0) for --within %d ms; the ledger has no "
                          "success in it" % within)

    def health(self, observations, periods):
        """Each health observation of a Spring instance: a job said overdue had no success in its period
        plus grace, and a job said fine had one."""
        for o in observations:
            if self.during({"clock-forward"}, o["ts"] - CLOCK_STEP_MAX_MS - REFRESH_MS, o["ts"]):
                self.excused["a job's age judged from runs a server dated ahead (clock stepped forward)"] += 1
                continue
            for job, status in o["jobs"].items():
                period = periods.get(job)
                if period is None:
                    continue
                limit = period + min(period / 2, 3600000)
                oks = self.successes(job)
                last = max((t for t in oks if t <= o["ts"]), default=None)
                # the starter judges from a view it refreshes every 2 s: a success in the last
                # REFRESH_MS may not be in it yet
                if status == "overdue" and any(o["ts"] - limit + 2000 <= t <= o["ts"] - REFRESH_MS for t in oks):
                    self.flag("false signal", job, o["ts"], "%s said %s overdue; it succeeded %.0f ms "
                              "before (limit %d)" % (o["instance"], job, o["ts"] - last, limit))
                gap = None if last is None else o["ts"] - last
                at_most = OWN_NAME_AT_MOST_MS.get(job)
                if (status == "ok" and at_most and gap is not None and limit + 2000 + REFRESH_MS < gap
                        <= limit + at_most + 2000 + REFRESH_MS
                        and any(s <= o["ts"] and e >= o["ts"] - gap for _, s, e, _ in self.faults)):
                    self.excused["a job on time while its lock was held, by a run or an acquire a fault "
                                 "cut off, up to atMost"] += 1
                    continue
                if status == "ok" and (last is None or o["ts"] - last > limit + 2000 + REFRESH_MS):
                    self.flag("false signal", job, o["ts"], "%s said %s ran in time; no success for %s ms"
                              % (o["instance"], job, "ever" if last is None else "%.0f" % (o["ts"] - last)))
