#!/usr/bin/env python3
"""Draws the panels of the Grafana dashboard docs/grafana/dibs-dashboard.json from the scrapes that
scripts/dashboard-shot.sh took, into <work>/dashboard.png: matplotlib, not Grafana (none runs here),
and no network.

The data is what Prometheus would have stored: each scrape of <work>/scrapes/<app>/<epoch ms>.prom
(the text format of /actuator/prometheus) gets the labels Prometheus attaches to a target,
instance="127.0.0.1:<port>" and job="dibs-example", and a scraped label that clashes with them is
renamed exported_<label> (honor_labels: false, Prometheus's default). dibs's meters tag the job
as `lock`, the dibs.job.* gauges too, so none clashes.

Each panel's PromQL is evaluated here by hand, for $job and $instance at All (.*) and a
$__rate_interval of 4 s (4 x the 1 s scrape interval): rate() and increase() extrapolate as
Prometheus does, an instant selector takes the latest sample within 5 minutes. The table PANELS
below holds each panel's title and queries beside their Python twins; the dashboard's JSON must
say the same, or this script stops, so the picture cannot drift from the dashboard.

Usage: scripts/plot-dashboard.py [WORK] [--dashboard JSON] [--out PNG]
  WORK defaults to target/dashboard-shot; the picture to WORK/dashboard.png.
"""
import argparse
import collections
import datetime
import glob
import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.gridspec import GridSpec, GridSpecFromSubplotSpec  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator  # noqa: E402

SCRAPE_JOB = "dibs-example"   # the scrape job's name, as a prometheus.yml would give it
RATE_INTERVAL = 4.0           # $__rate_interval: 4 x the 1 s scrape interval
LOOKBACK = 300.0              # Prometheus's lookback for instant selectors
STEP = 1.0                    # the query step

# Grafana's dark theme.
BG, PANEL, BORDER, TEXT, MUTED, GRID = "#111217", "#181b1f", "#2a2d33", "#ccccdc", "#8e8e9f", "#25282d"
PALETTE = ["#73BF69", "#F2CC0C", "#8AB8FF", "#FF780A", "#F2495C", "#5794F2", "#B877D9"]
NAMED = {"red": "#F2495C", "orange": "#FF9830", "yellow": "#FADE2A", "green": "#73BF69"}
PAUSE_FILL, PAUSE_EDGE = "#5794F2", "#8AB8FF"

# ---------------------------------------------------------------------------------------------
# The data: samples per series, as Prometheus stores them.

LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_value(text):
    return float(text)   # also NaN, +Inf and -Inf


def load(work):
    """{metric: {labels (a sorted tuple of pairs): [(t seconds, value)]}}, and the events."""
    events = json.load(open(os.path.join(work, "events.json")))
    db = collections.defaultdict(lambda: collections.defaultdict(list))
    for app, addr in events["targets"].items():
        files = glob.glob(os.path.join(work, "scrapes", app, "*.prom"))
        if not files:
            sys.exit(f"plot-dashboard.py: no scrapes of {app} in {work}/scrapes/{app}")
        for path in sorted(files, key=lambda p: int(os.path.basename(p)[:-5])):
            t = int(os.path.basename(path)[:-5]) / 1000.0
            for line in open(path):
                if line.startswith("#") or not line.strip():
                    continue
                m = LINE.match(line.strip())
                if not m:
                    continue
                name, labels, value = m.group(1), dict(LABEL.findall(m.group(2) or "")), parse_value(m.group(3))
                for clash in ("job", "instance"):
                    if clash in labels:
                        labels["exported_" + clash] = labels.pop(clash)
                labels.update(instance=addr, job=SCRAPE_JOB)
                db[name][tuple(sorted(labels.items()))].append((t, value))
    return db, events


# ---------------------------------------------------------------------------------------------
# The few PromQL pieces the panels use. A vector is {labels tuple: value}.

def select(db, name, **regexes):
    """The series of `name` whose labels fully match the regexes (`lock=".*"` needs the label)."""
    out = []
    for labels, samples in db.get(name, {}).items():
        d = dict(labels)
        if all(re.fullmatch(rx, d.get(k, "")) for k, rx in regexes.items()):
            out.append((labels, samples))
    return out


def instant(series, t):
    out = {}
    for labels, samples in series:
        last = [v for ts, v in samples if t - LOOKBACK < ts <= t]
        if last:
            out[labels] = last[-1]
    return out


def extrapolated(series, t, window, is_rate):
    """rate() / increase() as Prometheus computes them (promql/functions.go, extrapolatedRate)."""
    out = {}
    start = t - window
    for labels, samples in series:
        pts = [(ts, v) for ts, v in samples if start < ts <= t]
        if len(pts) < 2:
            continue
        result = pts[-1][1] - pts[0][1]
        for (_, prev), (_, cur) in zip(pts, pts[1:]):
            if cur < prev:   # a counter reset
                result += prev
        sampled = pts[-1][0] - pts[0][0]
        avg = sampled / (len(pts) - 1)
        to_start, to_end = pts[0][0] - start, t - pts[-1][0]
        if to_start >= avg * 1.1:
            to_start = avg / 2
        if result > 0 and pts[0][1] >= 0:
            to_start = min(to_start, sampled * (pts[0][1] / result))
        if to_end >= avg * 1.1:
            to_end = avg / 2
        factor = (sampled + to_start + to_end) / sampled
        if is_rate:
            factor /= window
        out[tuple((k, v) for k, v in labels if k != "__name__")] = result * factor
    return out


def rate(series, t):
    return extrapolated(series, t, RATE_INTERVAL, True)


def increase(series, t):
    return extrapolated(series, t, RATE_INTERVAL, False)


def aggregate(vector, by, how):
    groups = collections.defaultdict(list)
    for labels, v in vector.items():
        d = dict(labels)
        groups[tuple((k, d[k]) for k in by if k in d)].append(v)
    if how == "sum":
        return {k: sum(vs) for k, vs in groups.items()}
    # max ignores NaN unless every value is NaN, as Prometheus's does
    return {k: (max(x for x in vs if not math.isnan(x)) if any(not math.isnan(x) for x in vs) else math.nan)
            for k, vs in groups.items()}


def add(a, b):
    """a + b, one-to-one on identical label sets."""
    return {k: v + b[k] for k, v in a.items() if k in b}


# ---------------------------------------------------------------------------------------------
# The panels: id, title, type and each query (refId, PromQL, its evaluation at t).

F = 'lock=~"$job", instance=~"$instance"'
J = F
RI = "[$__rate_interval]"
ALL = {"lock": ".*", "instance": ".*"}
ALLJ = ALL


def panels(db):
    s = lambda name, **rx: select(db, name, **rx)  # noqa: E731
    runs, skipped = s("dibs_lock_execution_seconds_count", **ALL), s("dibs_lock_skipped_total", **ALL)
    overdue, age = s("dibs_job_overdue", **ALLJ), s("dibs_job_last_run_age_seconds", **ALLJ)
    expired, unproven = s("dibs_lock_expired_total", **ALL), s("dibs_lock_unproven_total", **ALL)
    failures, unconfirmed = s("dibs_lock_release_failures_total", **ALL), s("dibs_lock_unconfirmed_total", **ALL)
    for name, found in (("dibs_lock_execution_seconds_count", runs), ("dibs_job_overdue", overdue),
                        ("dibs_job_last_run_age_seconds", age), ("dibs_lock_skipped_total", skipped)):
        if not found:
            sys.exit(f"plot-dashboard.py: no {name} in the scrapes")

    def count_overdue(t):
        n = sum(1 for v in aggregate(instant(overdue, t), ["lock"], "max").values() if v == 1)
        return {(): float(n)}   # count(...) has no series when 0: `or vector(0)` gives the 0

    return [
        (1, "Runs per job", "timeseries", [
            ("A", f'sum by (lock) (rate(dibs_lock_execution_seconds_count{{{F}}}{RI}))',
             lambda t: aggregate(rate(runs, t), ["lock"], "sum"))]),
        (2, "Skips per job", "timeseries", [
            ("A", f'sum by (lock) (rate(dibs_lock_skipped_total{{{F}}}{RI}))',
             lambda t: aggregate(rate(skipped, t), ["lock"], "sum"))]),
        (3, "Executions per instance", "timeseries", [
            ("A", f'sum by (instance) (rate(dibs_lock_execution_seconds_count{{{F}}}{RI}))',
             lambda t: aggregate(rate(runs, t), ["instance"], "sum"))]),
        (4, "Jobs overdue now", "stat", [
            ("A", f'count(max by (lock) (dibs_job_overdue{{{J}}}) == 1) or vector(0)', count_overdue)]),
        (5, "Overdue jobs", "timeseries", [
            ("A", f'max by (lock) (dibs_job_overdue{{{J}}})',
             lambda t: aggregate(instant(overdue, t), ["lock"], "max"))]),
        (6, "Last successful run age", "timeseries", [
            ("A", f'max by (lock) (dibs_job_last_run_age_seconds{{{J}}})',
             lambda t: aggregate(instant(age, t), ["lock"], "max"))]),
        (7, "Lock lost, release failures, unconfirmed", "timeseries", [
            ("A", f'sum by (lock) (increase(dibs_lock_expired_total{{{F}}}{RI}) + '
                  f'increase(dibs_lock_unproven_total{{{F}}}{RI}))',
             lambda t: aggregate(add(increase(expired, t), increase(unproven, t)), ["lock"], "sum")),
            ("B", f'sum by (lock) (increase(dibs_lock_release_failures_total{{{F}}}{RI}))',
             lambda t: aggregate(increase(failures, t), ["lock"], "sum")),
            ("C", f'sum by (lock) (increase(dibs_lock_unconfirmed_total{{{F}}}{RI}))',
             lambda t: aggregate(increase(unconfirmed, t), ["lock"], "sum"))]),
    ]


def check_against(dashboard, table):
    """The dashboard's panels must be the table's: same ids, titles, types and queries."""
    by_id = {p["id"]: p for p in dashboard["panels"]}
    problems = []
    if set(by_id) != {pid for pid, *_ in table}:
        problems.append(f"panel ids {sorted(by_id)} in the dashboard, {[p[0] for p in table]} here")
    for pid, title, kind, queries in table:
        p = by_id.get(pid)
        if p is None:
            continue
        if (p["title"], p["type"]) != (title, kind):
            problems.append(f"panel {pid}: {p['type']} '{p['title']}' in the dashboard, {kind} '{title}' here")
        theirs = [(q["refId"], q["expr"]) for q in p["targets"]]
        ours = [(ref, expr) for ref, expr, _ in queries]
        if theirs != ours:
            problems.append(f"panel {pid} '{title}': the dashboard queries {theirs}, this script computes {ours}")
    if problems:
        sys.exit("plot-dashboard.py: the dashboard and this script disagree:\n  " + "\n  ".join(problems))
    return by_id


# ---------------------------------------------------------------------------------------------
# Drawing.

def legend_of(fmt, labels, targets):
    d = dict(labels)
    text = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: d.get(m.group(1), ""), fmt).strip()
    if "instance" in d and "{{instance}}" in fmt.replace(" ", ""):
        app = next((a for a, addr in targets.items() if addr == d["instance"]), None)
        text += f" ({app})" if app else ""
    return text or "value"


def unit_formatter(unit):
    def fmt(v, _pos):
        num = f"{v:.2f}".rstrip("0").rstrip(".") if abs(v) < 10 else f"{v:.0f}"
        return {"ops": f"{num} ops/s", "s": f"{num} s"}.get(unit, num)
    return FuncFormatter(fmt)


def style(ax, title):
    ax.set_facecolor(PANEL)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.tick_params(colors=MUTED, labelsize=7.5, length=0)
    ax.grid(True, color=GRID, linewidth=0.7)
    ax.set_axisbelow(True)
    ax.set_title(title, loc="left", color=TEXT, fontsize=10.5, fontweight="bold", pad=7)


def shade_pause(ax, pause, resume, label):
    ax.axvspan(pause, resume, color=PAUSE_FILL, alpha=0.13, linewidth=0, zorder=0)
    for x in (pause, resume):
        ax.axvline(x, color=PAUSE_EDGE, alpha=0.55, linewidth=0.9, linestyle=(0, (4, 3)), zorder=1)
    if label:
        ax.text(pause + (resume - pause) / 2, 0.97, "tick job paused on all 3 instances", transform=ax.get_xaxis_transform(),
                ha="center", va="top", color=PAUSE_EDGE, fontsize=7.5, alpha=0.9)


def draw_timeseries(ax, panel, series_by_ref, times, events, pause, resume, label_pause):
    defaults = panel["fieldConfig"]["defaults"]
    custom, unit = defaults.get("custom", {}), defaults.get("unit", "short")
    overrides = {o["matcher"]["options"]: o["properties"][0]["value"]["fixedColor"]
                 for o in panel["fieldConfig"].get("overrides", []) if o["matcher"]["id"] == "byFrameRefID"}
    fixed = defaults.get("color", {}).get("fixedColor") if defaults.get("color", {}).get("mode") == "fixed" else None
    style(ax, panel["title"])
    shade_pause(ax, pause, resume, label_pause)
    fmt_by_ref = {q["refId"]: q["legendFormat"] for q in panel["targets"]}
    n, top = 0, 0.0
    step = custom.get("lineInterpolation") == "stepAfter"
    alpha = custom.get("fillOpacity", 10) / 100.0
    for ref, series in series_by_ref:
        for labels, values in sorted(series.items()):
            color = NAMED.get(overrides.get(ref) or fixed, overrides.get(ref) or fixed) if (overrides.get(ref) or fixed) \
                else PALETTE[n % len(PALETTE)]
            n += 1
            name = legend_of(fmt_by_ref[ref], labels, events["targets"])
            kw = dict(drawstyle="steps-post") if step else {}
            ax.plot(times, values, color=color, linewidth=1.6, label=name, **kw)
            ax.fill_between(times, values, 0, color=color, alpha=alpha, linewidth=0,
                            step="post" if step else None)
            finite = [v for v in values if not math.isnan(v)]
            top = max([top] + finite)
    lo = defaults.get("min", 0)
    hi = defaults.get("max")
    ax.set_ylim(lo, hi if hi is not None else max(1.0, top * 1.15))
    if hi == 1 and defaults.get("decimals") == 0:
        ax.set_yticks([0, 1])
    else:
        ax.yaxis.set_major_locator(MaxNLocator(5))
    ax.yaxis.set_major_formatter(unit_formatter(unit))
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S"))
    ax.xaxis.set_major_locator(mdates.SecondLocator(bysecond=range(0, 60, 10)))
    ax.set_xlim(times[0], times[-1])
    leg = ax.legend(loc="upper left", bbox_to_anchor=(0, -0.09), ncol=4, frameon=False, fontsize=7.5,
                    handlelength=1.2, labelcolor=TEXT, borderaxespad=0)
    for line in leg.get_lines():
        line.set_linewidth(3)


def draw_stat(ax, panel, series, times):
    values = [v.get((), math.nan) for v in series]
    last = next((v for v in reversed(values) if not math.isnan(v)), math.nan)
    steps = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
    color = steps[0]["color"]
    for s in steps[1:]:
        if last >= s["value"]:
            color = s["color"]
    color = NAMED.get(color, color)
    ax.set_facecolor(color)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(panel["title"], loc="left", color=TEXT, fontsize=10.5, fontweight="bold", pad=7)
    # graphMode area: the series as a faint sparkline behind the value
    ax.fill_between(times, values, 0, color="white", alpha=0.12, linewidth=0, step="post")
    ax.plot(times, values, color="white", alpha=0.35, linewidth=1.2, drawstyle="steps-post")
    ax.set_ylim(0, max(1.0, max(v for v in values if not math.isnan(v))) * 2.2)
    ax.set_xlim(times[0], times[-1])
    ax.text(0.5, 0.6, f"{last:.0f}", transform=ax.transAxes, ha="center", va="center", color="white",
            fontsize=34, fontweight="bold")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("work", nargs="?", default="target/dashboard-shot")
    ap.add_argument("--dashboard", default=os.path.join(os.path.dirname(__file__), "..", "docs", "grafana",
                                                        "dibs-dashboard.json"))
    ap.add_argument("--out")
    args = ap.parse_args()
    out = args.out or os.path.join(args.work, "dashboard.png")

    dashboard = json.load(open(args.dashboard))
    db, events = load(args.work)
    table = panels(db)
    by_id = check_against(dashboard, table)

    # From one rate interval after the first scrape: every rate then has a whole window behind it.
    t0, t1 = events["start"] / 1000.0 + RATE_INTERVAL, events["end"] / 1000.0
    grid = [t0 + i * STEP for i in range(int((t1 - t0) / STEP) + 1)]
    when = [datetime.datetime.fromtimestamp(t) for t in grid]
    pause = datetime.datetime.fromtimestamp(events["pause"] / 1000.0)
    resume = datetime.datetime.fromtimestamp(events["resume"] / 1000.0)

    def evaluate(fn):
        per_t = [fn(t) for t in grid]
        keys = sorted({k for v in per_t for k in v})
        return {k: [v.get(k, math.nan) for v in per_t] for k in keys}, per_t

    results = {pid: [(ref, *evaluate(fn)) for ref, _, fn in queries] for pid, _, _, queries in table}

    fig = plt.figure(figsize=(16, 10.4), dpi=110, facecolor=BG)
    fig.text(0.012, 0.975, dashboard["title"], color=TEXT, fontsize=14, fontweight="bold", va="center")
    variables = "   ".join(f"{v['label']}: All" for v in dashboard["templating"]["list"])
    span = f"{when[0]:%Y-%m-%d %H:%M:%S} to {when[-1]:%H:%M:%S}"
    fig.text(0.988, 0.975, f"{variables}      {span}", color=MUTED, fontsize=9, ha="right", va="center")
    fig.text(0.012, 0.012,
             "Rendered by scripts/dashboard-shot.sh with scripts/plot-dashboard.py (matplotlib, not Grafana) from "
             "/actuator/prometheus of examples/spring-boot, 3 instances scraped every 1 s.\n"
             f"The dashboard's queries evaluated as Prometheus would, $__rate_interval = {RATE_INTERVAL:.0f} s, "
             "Job and Instance All. Shaded: the tick job paused (POST /demo/pause) on all 3 instances.",
             color=MUTED, fontsize=7.5, va="bottom", linespacing=1.5)
    gs = GridSpec(3, 2, figure=fig, left=0.045, right=0.99, top=0.935, bottom=0.1, hspace=0.55, wspace=0.1)
    cells = {1: gs[0, 0], 2: gs[0, 1], 3: gs[1, 0], 5: gs[1, 1], 6: gs[2, 0], 7: gs[2, 1]}
    for pid, cell in cells.items():
        if pid == 5:   # as on the dashboard: the stat (w 4) beside the time series (w 8)
            sub = GridSpecFromSubplotSpec(1, 2, subplot_spec=cell, width_ratios=[1, 2], wspace=0.12)
            (_, _, per_t), = results[4]
            draw_stat(fig.add_subplot(sub[0, 0]), by_id[4], per_t, when)
            ax = fig.add_subplot(sub[0, 1])
        else:
            ax = fig.add_subplot(cell)
        draw_timeseries(ax, by_id[pid], [(ref, series) for ref, series, _ in results[pid]], when, events,
                        pause, resume, label_pause=pid in (1, 2))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, facecolor=BG)
    print(f"plot-dashboard.py: {out} ({len(grid)} steps, {len(table)} panels)")


if __name__ == "__main__":
    main()
