"""What a run prints: the seed, the faults injected, the counts, and each violation with the slice
of the timeline around it."""

import json
from collections import Counter

from .checker import TICK_JOBS
from .workload import zone_changes


def dst_changes(c):
    """(fall-backs, spring-forwards, shift) of the Spring workers' zone during the workload, or None."""
    zone = next((e for e in c.events if e.get("k") == "zone"), None)
    if zone is None:
        return None
    work = [e["ts"] for e in c.events if e.get("k") in ("call", "outcome")]
    if not work:
        return None
    a, b = (c.wall0 + min(work)) / 1000, (c.wall0 + max(work)) / 1000
    return zone_changes(zone["anchor"], a, b) + (zone["shift"],)


def counts_of(c, nemesis):
    calls = [e for e in c.events if e.get("k") == "call"]
    outcomes = Counter(e.get("d", "").split(":")[0] for e in c.events if e.get("k") == "outcome")
    exits = Counter(e.get("d") for e in c.events if e.get("k") == "exit")
    ticks = {(r.j, r.due) for r in c.runs.values() if r.j in TICK_JOBS}
    ticks |= {(e.get("j"), int(e.get("due") or 0)) for e in calls if e.get("j") in TICK_JOBS}
    writes = Counter(ok for r in c.runs.values() for _, ok in r.writes)
    return {
        "ticks": len(ticks), "calls": len(calls) + sum(1 for e in c.events if e.get("k") == "start" and e.get("f") == "shedlock"),
        "runs": len(c.runs), "skips": outcomes.get("skipped", 0) + exits.get("0", 0) - sum(
            1 for r in c.runs.values() if r.f == "run"),
        "errors": outcomes.get("error", 0), "writes accepted": writes.get(True, 0),
        "writes refused": writes.get(False, 0), "faults": len(nemesis.done),
        "violations": len(c.violations),
    }


def summarize(kind, seed, seconds, c, nemesis, ledger, took):
    counts = counts_of(c, nemesis)
    print("\nrobustness: %s seed %d, %d s of workload (%.0f s in all)" % (kind, seed, seconds, took))
    for kind_, target in nemesis.done:
        print("  fault %-14s %s" % (kind_, target))
    zone = dst_changes(c)
    if zone:
        print("  zone  Dibs/Harness: %d fall-backs and %d spring-forwards of %d s while the workload ran" % zone)
    print("  " + ", ".join("%s %d" % kv for kv in counts.items()))
    for reason, n in sorted(c.excused.items()):
        print("  allowed by the documentation: %s: %d" % (reason, n))
    print("  ledger: %s" % ledger.path)
    return counts


def violations(c, ledger):
    for v in c.violations:
        print("\nVIOLATION %s on %s at %.0f ms: %s" % (v["kind"], v["lock"], v["ts"], v["message"]))
        lock = v["lock"]
        for e in c.events:
            near = abs(e["ts"] - v["ts"]) <= 3000
            mine = e.get("l") == lock or e.get("j") == lock or e.get("k") == "fault"
            if near and mine:
                shown = {k: e[k] for k in sorted(e) if k not in ("raw",)}
                print("    %9.0f %s" % (e["ts"], json.dumps(shown, sort_keys=True)))


class Totals:
    def __init__(self):
        self.counts, self.faults, self.runs = Counter(), Counter(), 0

    def add(self, counts, nemesis, c=None):
        self.runs += 1
        self.counts.update(counts)
        self.faults.update(kind for kind, target in nemesis.done if not target.startswith("not injected"))
        zone = dst_changes(c) if c is not None else None
        if zone:
            self.faults.update({"dst-fall-back": zone[0], "dst-spring-forward": zone[1]})

    def show(self):
        print("\nrobustness: %d runs: %s" % (self.runs, ", ".join("%s %d" % kv for kv in self.counts.items())))
        print("robustness: faults injected by kind: %s" % ", ".join("%s %d" % kv for kv in sorted(self.faults.items())))
