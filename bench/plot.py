"""Draws the benchmark's two figures from the CSVs bench.Bench wrote.

    python3 bench/plot.py bench/results

latency-cdf.png: the CDF of one uncontended cycle (workload a), all rounds pooled.
throughput.png: cycles per second against threads on distinct lock names (workload b).
"""

import csv
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

# One colour per contender, the same in both figures.
COLOURS = {
    "dibs": "#d62728",
    "dibs (history off)": "#ff9896",
    "ShedLock-Jedis": "#1f77b4",
    "ShedLock-Lettuce": "#2ca02c",
    "raw Jedis": "#7f7f7f",
    "Redisson": "#9467bd",
}


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def reference(rows, name):
    return {int(r["clients"]): float(r["value"]) for r in rows if r["name"] == name}


def latency_cdf(results, refs):
    curves = defaultdict(list)
    for r in read(results / "latency-cdf.csv"):
        curves[r["contender"]].append((float(r["micros"]), float(r["quantile"])))
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    tail, head = 0, float("inf")
    for name, points in curves.items():
        xs, ys = zip(*sorted(points))
        ax.plot(xs, ys, label=name, color=COLOURS.get(name), linewidth=1.8)
        tail = max(tail, max(x for x, q in points if q <= 0.99))
        head = min(head, min(x for x, _ in points))
    twice_set = reference(refs, "twice_set_p50_us").get(1)
    if twice_set:
        ax.axvline(twice_set, color="black", linestyle=":", linewidth=1,
                   label=f"2 × redis-benchmark SET p50 ({twice_set:.0f} µs)")
    ax.set_xscale("log")
    # Up to 1.5 x the slowest p99: further out a few stray samples squeeze the curves together.
    ax.set_xlim(head * 0.9, tail * 1.5)
    nice = [v * 10**e for e in range(0, 6) for v in (1, 1.5, 2, 3, 5, 7)]
    ax.set_xticks([v for v in nice if head * 0.9 <= v <= tail * 1.5])
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("one lock cycle, µs (log scale; cut at 1.5 × the slowest p99)")
    ax.set_ylabel("fraction of cycles at most this long")
    ax.set_title("(a) uncontended lock cycle, 1 thread: SET NX PX, no-op task, release")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(results / "latency-cdf.png")


def throughput(results, refs):
    series = defaultdict(list)
    for r in read(results / "throughput.csv"):
        series[r["contender"]].append((int(r["threads"]), float(r["median"]), float(r["min"]), float(r["max"])))
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    for i, (name, points) in enumerate(series.items()):
        points.sort()
        # Side by side around each thread count, so that overlapping bars stay apart.
        dodge = 1.06 ** (i - (len(series) - 1) / 2)
        threads = [p[0] * dodge for p in points]
        median = [p[1] for p in points]
        low = [p[1] - p[2] for p in points]
        high = [p[3] - p[1] for p in points]
        ax.errorbar(threads, median, yerr=[low, high], label=name, color=COLOURS.get(name), marker="o",
                    capsize=3, linewidth=1.8)
    half = reference(refs, "half_set_rps")
    if half:
        clients = sorted(half)
        ax.plot(clients, [half[c] for c in clients], color="black", linestyle=":", marker="x",
                label="½ redis-benchmark SET rate")
    ax.set_xscale("log", base=2)
    ax.set_xticks([1, 4, 16, 64])
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("threads, each on its own lock name")
    ax.set_ylabel("lock cycles per second (median, bars: min–max of rounds)")
    ax.set_title("(b) throughput against threads")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(results / "throughput.png")


def main():
    results = Path(sys.argv[1] if len(sys.argv) > 1 else "bench/results")
    refs = read(results / "reference.csv")
    latency_cdf(results, refs)
    throughput(results, refs)
    print(f"wrote {results / 'latency-cdf.png'} and {results / 'throughput.png'}")


if __name__ == "__main__":
    main()
