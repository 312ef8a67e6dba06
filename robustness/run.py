#!/usr/bin/env python3
"""The robustness harness of dibs (docs/reliability.md, "The robustness harness").

  python3 robustness/run.py --profile ci --fresh-seed   # the test command's: 3 fixed seeds and a new one
  python3 robustness/run.py --profile ci      # the 3 fixed seeds alone, under 3 min
  python3 robustness/run.py --profile long    # by hand: 30 minutes and more, random seeds
  python3 robustness/run.py --topology sentinel --seed 7 --seconds 40   # replays one run

Each run starts a topology (single, sentinel, cluster) from the suite's servers, a workload of
every front end (library JVMs, Spring Boot with a ShedLock job, cron hosts of `dibs run`), a
nemesis whose faults come from the seed, and ends with the checker. Exit 0 when no run broke a
rule; 1 otherwise, with each violation, the timeline around it and the command that replays it.
Needs the Rust CLI (cargo build -p dibs-cli) and the workers (mvn -pl robustness/workers -am
package -DskipTests)."""

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import report, session  # noqa: E402

CI_RUNS = [("single", 1), ("sentinel", 2), ("cluster", 3)]
CI_SECONDS = 40
LONG_SECONDS = 120


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=["ci", "long"])
    parser.add_argument("--topology", choices=["single", "sentinel", "cluster"])
    parser.add_argument("--seed", type=int)
    parser.add_argument("--seconds", type=int, help="each run's workload (40; 120 in the long profile)")
    parser.add_argument("--minutes", type=float, default=30, help="the long profile's length")
    parser.add_argument("--workdir", default="target/robustness")
    parser.add_argument("--fresh-seed", action="store_true",
                        help="with --profile ci: one more run, on a new random seed (printed)")
    parser.add_argument("--judge", metavar="DIR",
                        help="judge again what a finished run left in DIR (target/robustness/<topology>-<seed>)")
    parser.add_argument("--fronts", default=",".join(session.FRONTS),
                        help="the front ends to run, of library,spring,cron (all by default)")
    args = parser.parse_args()
    if args.seconds is None and args.profile != "long":
        args.seconds = CI_SECONDS

    if args.judge:
        c = session.rejudge(args.judge)
        for reason, n in sorted(c.excused.items()):
            print("  allowed by the documentation: %s: %d" % (reason, n))
        report.violations(c, None)
        print("robustness: %d violations" % len(c.violations))
        return 1 if c.violations else 0
    if args.profile == "ci":
        runs = list(CI_RUNS)
        if args.fresh_seed:
            fresh = random.SystemRandom().randrange(1000, 10**6)
            runs.append((CI_RUNS[fresh % 3][0], fresh))
            print("robustness: the new seed this time: %d" % fresh)
        print("robustness: the CI profile: %s, %d s each" % (", ".join("%s seed %d" % r for r in runs), args.seconds))
        plan = ((kind, seed, args.seconds) for kind, seed in runs)
    elif args.profile == "long":
        plan = long_plan(args.minutes, args.seconds or LONG_SECONDS)
    else:
        if not args.topology or args.seed is None:
            parser.error("give --profile, or --topology and --seed")
        plan = [(args.topology, args.seed, args.seconds)]

    totals, failed = report.Totals(), []
    for kind, seed, seconds in plan:
        started = time.monotonic()
        c, nemesis, load, ledger = session.run(kind, seed, seconds, args.workdir,
                                                tuple(args.fronts.split(",")))
        counts = report.summarize(kind, seed, seconds, c, nemesis, ledger, time.monotonic() - started)
        totals.add(counts, nemesis, c)
        if c.violations:
            failed.append((kind, seed, seconds))
            report.violations(c, ledger)
    totals.show()
    for kind, seed, seconds in failed:
        print("robustness: replay: python3 robustness/run.py --topology %s --seed %d --seconds %d"
              % (kind, seed, seconds))
    return 1 if failed else 0


def long_plan(minutes, seconds):
    deadline = time.monotonic() + minutes * 60
    rng = random.SystemRandom()
    kinds = ["single", "sentinel", "cluster"]
    n = 0
    while time.monotonic() < deadline:
        yield kinds[n % 3], rng.randrange(1000, 10**6), seconds
        n += 1


if __name__ == "__main__":
    sys.exit(main())
