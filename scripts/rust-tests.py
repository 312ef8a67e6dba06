#!/usr/bin/env python3
"""`cargo test --workspace`, its test programs' modules a few at a time.

Each crate's integration tests are one program (`tests/it` of the core, `tests/cli` of the command
line), a module a subject. They wait on servers, failovers, clocks and timeouts far more than
they compute (measured 2026-12-07: 230 s one after another, 180 s of it in the 8 modules of
LONGEST), and each starts servers of its own on free ports. So this builds every test program
once, then runs each module of an integration test program as a process of its own (`cargo test
--workspace --test NAME -- --exact` its tests), and every other target (--lib, --bin NAME, --doc:
what `cargo test --workspace` runs, read from `cargo metadata`) as cargo would, LANES at a time,
the longest first. Each run's output is printed whole when it ends, as cargo prints it
("Running tests/NAME/main.rs (...)" first: the compatibility matrix reads that log). Runs every
module even after one failed; exits 1 naming the failed ones.

Usage: scripts/rust-tests.py [--lanes N]     (3 by default)
"""
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Seconds each took one after another on this machine (2 cores), longest first; the rest take
# under 8 s each and follow in cargo's order.
LONGEST = {"failover": 40, "durable": 30, "cluster": 25, "tick_start": 22, "run_descendants": 20,
           "pileup": 16, "cluster_bounds": 14, "sentinel": 14}


def programs():
    """[(label, cargo test arguments)] of what `cargo test --workspace` runs, in cargo's order,
    an integration test program's modules apart. Each selects its target within --workspace,
    never with -p: a package alone would unify its dependencies' features apart from the
    workspace's and build them again."""
    metadata = json.loads(subprocess.run(
        ["cargo", "metadata", "--no-deps", "--format-version", "1"], cwd=ROOT, check=True,
        capture_output=True, text=True).stdout)
    members = set(metadata["workspace_members"])
    executables = built()
    found, libs, doc = [], False, False
    for package in metadata["packages"]:
        if package["id"] not in members:
            continue
        for target in package["targets"]:
            kinds = target["kind"]
            if not target.get("test"):
                continue
            if "test" in kinds:
                selected = ["--workspace", "--test", target["name"], "--"]
                for module, names in modules(executables[target["name"]]).items():
                    found.append((module, selected + ["--exact"] + names))
            elif "bin" in kinds or "example" in kinds or "bench" in kinds:
                kind = next(k for k in ("bin", "example", "bench") if k in kinds)
                found.append((f"{kind} {target['name']}", ["--workspace", f"--{kind}", target["name"]]))
            else:  # lib, rlib, cdylib, proc-macro
                libs = True
                doc = doc or bool(target.get("doctest"))
    return ([("the libraries' unit tests", ["--workspace", "--lib"])] if libs else []) + found + (
        [("the doc tests", ["--workspace", "--doc"])] if doc else [])


def built():
    """{integration test program: its executable}, building every test program once (cargo's
    messages to stderr as they come)."""
    build = subprocess.run(
        ["cargo", "test", "--workspace", "--no-run", "--message-format=json-render-diagnostics"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if build.returncode != 0:
        sys.exit("rust-tests: the build failed")
    executables = {}
    for line in build.stdout.splitlines():
        message = json.loads(line) if line.startswith("{") else {}
        target = message.get("target", {})
        if message.get("executable") and "test" in target.get("kind", []):
            executables[target["name"]] = message["executable"]
    return executables


def modules(executable):
    """{module: [its tests' full names]} of an integration test program, in its order."""
    listed = subprocess.run([executable, "--list", "--format", "terse"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    found = {}
    for line in listed.splitlines():
        if line.endswith(": test"):
            name = line[: -len(": test")]
            found.setdefault(name.split("::")[0], []).append(name)
    return found


def main():
    lanes = 3
    if "--lanes" in sys.argv:
        lanes = int(sys.argv[sys.argv.index("--lanes") + 1])
    # One build of every test program first, so that the lanes only run them.
    work = programs()
    work.sort(key=lambda item: -LONGEST.get(item[0], 0))  # stable: the rest keep cargo's order
    printing, failed = threading.Lock(), []
    started = time.monotonic()

    def run(label, args):
        began = time.monotonic()
        run = subprocess.run(["cargo", "test"] + args, cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        with printing:
            sys.stdout.write(run.stdout)
            print(f"rust-tests: {label}: {'passed' if run.returncode == 0 else 'FAILED'} in "
                  f"{time.monotonic() - began:.1f} s", flush=True)
            if run.returncode != 0:
                failed.append(label)

    with ThreadPoolExecutor(max_workers=lanes) as pool:
        for done in [pool.submit(run, *item) for item in work]:
            done.result()
    print(f"rust-tests: {len(work)} test modules and programs, {lanes} at a time, in "
          f"{time.monotonic() - started:.0f} s", flush=True)
    if failed:
        sys.exit(f"rust-tests: failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
