#!/usr/bin/env python3
"""Prints the reliability summary from the key=value files the tests leave in target/reliability."""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "target" / "reliability"
totals = {}
for f in sorted(root.glob("*.txt")):
    for line in f.read_text().splitlines():
        key, _, value = line.partition("=")
        if value.strip().isdigit():
            totals[key.strip()] = totals.get(key.strip(), 0) + int(value)

rows = [
    ("bad-input cases tried (Java table)", "cases"),
    ("commands sent to Redis by rejected inputs", "commands"),
    ("fuzz cases tried (URI, map, lock arguments)", "fuzz_cases"),
    ("fault scenarios survived", "faults"),
    ("lock attempts under load (4 JVMs x 8 threads + Rust)", "attempts"),
    ("  of which won", "wins"),
    ("  of which skipped", "skips"),
    ("overlaps seen", "overlaps"),
    ("test passwords found in the suite's output", "leaks"),
]
missing = [key for _, key in rows if key not in totals]
print("\n| reliability | figure |\n|---|---:|")
for label, key in rows:
    print(f"| {label} | {totals[key]:,} |" if key in totals else f"| {label} | (not run) |")
bad = {k: totals.get(k) for k in ("commands", "overlaps", "leaks") if totals.get(k)}
if missing or bad:
    print(f"reliability: missing {missing}, nonzero {bad}", file=sys.stderr)
    sys.exit(1)
