#!/usr/bin/env python3
"""The compatibility matrix: the suites that tell whether dibs works on a server, run against
each server of the matrix, and the table of what passed.

Servers: Debian's redis-server (the one on PATH) and the builds of scripts/redis-servers.sh
(Redis 6.2.16, Redis 7.4.1, Valkey 8.0.1, from ../shared/redis-servers). For each, with
DIBS_REDIS_SERVER / DIBS_REDIS_CLI (Rust) and -Dredis.server (Java) pointing at it:

  lock contract            Java: DibsContractTest, DibsClientContractTest, DibsLeaseContractTest
  single-server faults     Rust: tests/it/lock.rs, lock_faults.rs, keepalive.rs, pileup.rs
                           (SIGSTOP, kill, restarts)
  TLS, client certificates Rust: tests/it/tls.rs (tls-auth-clients yes, and optional)
  ACL, refused commands    Rust: tests/it/conn.rs, durable.rs (the README's ACL, WAIT, WAITAOF,
                           renamed INFO/SCRIPT/CONFIG/CLIENT)
  Sentinel (TLS, auth)     Rust: tests/it/sentinel.rs (failover, TLS, the Sentinels' own auth)
  Cluster (TLS)            Rust: tests/it/cluster.rs (TLS, MOVED, ASK, frozen master)
  run history              Rust: tests/it/history.rs (XADD in the release script, SCAN, an ACL
                           without streams)

The Java contract runs for one server after another (one Maven build directory), beside the Rust
suites of every server at once, as the core's integration test program cargo built, a module a
process (they wait on servers and faults far more than they compute, and each starts servers of
its own on free ports).

Writes target/compat-matrix.md, then checks that README.md's table (between the
compat-matrix markers) is the same; `--write` puts it there instead. With `--debian-from LOG`,
the row of Debian's redis-server (the one the test command's own suites ran against) is read
from what those suites left, the Rust tests' output in LOG and the library's surefire reports,
instead of running them a second time. Exits 1 when a suite
failed or the README's table differs. Needs the Rust tests built and the Java module built with
its natives (scripts/test.sh runs it after both).
"""
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
OUT = ROOT / "target" / "compat-matrix.md"
BEGIN, END = "<!-- compat-matrix: begin -->", "<!-- compat-matrix: end -->"

COLUMNS = [
    "lock contract",
    "single-server faults",
    "TLS, client certificates required",
    "ACL, refused commands",
    "Sentinel (TLS, auth)",
    "Cluster (TLS)",
    "run history",
]
RUST = {
    "single-server faults": ["lock", "lock_faults", "keepalive", "pileup"],
    "TLS, client certificates required": ["tls"],
    "ACL, refused commands": ["conn", "durable"],
    "Sentinel (TLS, auth)": ["sentinel"],
    "Cluster (TLS)": ["cluster"],
    "run history": ["history"],
}
JAVA_CONTRACT = "DibsContractTest,DibsClientContractTest,DibsLeaseContractTest"
# One suite of one server, at most (they take 5 to 60 s): a hung one fails instead of hanging.
TIMEOUT_S = 900


def servers():
    """(label, redis-server, redis-cli) for Debian's and each build."""
    debian = subprocess.run(["which", "redis-server"], capture_output=True, text=True).stdout.strip()
    found = [("debian", debian, "redis-cli")]
    listed = subprocess.run(["bash", "scripts/redis-servers.sh"], cwd=ROOT, capture_output=True,
                            text=True)
    if listed.returncode != 0:
        sys.exit("compat-matrix: scripts/redis-servers.sh failed:\n" + listed.stderr)
    for line in listed.stdout.splitlines():
        label, directory = line.split()
        found.append((label, f"{directory}/redis-server", f"{directory}/redis-cli"))
    return found


def version(binary):
    """'Redis 7.0.15' or 'Valkey 8.0.1', from the binary itself."""
    text = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    match = re.match(r"(\w+) server v=(\S+)", text)
    return f"{match.group(1)} {match.group(2)}" if match else text.strip()


LIBTEST_LINE = re.compile(r"test (\S+) \.\.\. (ok|FAILED|ignored)")


def libtest_result(line):
    """(test name, passed) of a libtest result line, None for any other line or an ignored test."""
    match = LIBTEST_LINE.match(line)
    if not match or match.group(2) == "ignored":
        return None
    return match.group(1), match.group(2) == "ok"


def surefire_results(reports):
    """{test name: passed} of the test cases in these surefire XML reports (skipped ones left out)."""
    results = {}
    for report in reports:
        for case in ET.parse(report).getroot().iter("testcase"):
            if case.find("skipped") is not None:
                continue
            failed = case.find("failure") is not None or case.find("error") is not None
            results[f"{case.get('classname')}.{case.get('name')}"] = not failed
    return results


# The core's integration test program (tests/it): its modules are the suites above.
PROGRAM = "it"


def test_program():
    """(executable, {module: [its tests' full names]}) of the core's integration test program,
    built once (selected within --workspace: the test command's own build, with the workspace's
    features)."""
    built = subprocess.run(
        ["cargo", "test", "--workspace", "--no-run", "--message-format=json", "--test", PROGRAM],
        cwd=ROOT, capture_output=True, text=True, check=True)
    executable = None
    for line in built.stdout.splitlines():
        message = json.loads(line) if line.startswith("{") else {}
        target = message.get("target", {})
        if message.get("executable") and target.get("name") == PROGRAM:
            executable = message["executable"]
    if executable is None:
        sys.exit(f"compat-matrix: no test program built for {PROGRAM}")
    listed = subprocess.run([executable, "--list", "--format", "terse"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    modules = {}
    for line in listed.splitlines():
        if line.endswith(": test"):
            name = line[: -len(": test")]
            modules.setdefault(name.split("::")[0], []).append(name)
    return executable, modules


def rust(program, tests, env):
    """{test name: passed} of these modules of the core's integration test program, each run as
    a process of its own as cargo runs it (in the crate's directory), each to its end even after
    one failed."""
    executable, modules = program
    results, output = {}, []
    for test in tests:
        try:
            run = subprocess.run([executable, "--exact"] + modules.get(test, []), cwd=ROOT,
                                 env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            results[f"({test}: timed out)"] = False
            output.append(str(e.stdout or "") + str(e.stderr or ""))
            continue
        found = dict(filter(None, map(libtest_result, (run.stdout + run.stderr).splitlines())))
        if run.returncode != 0 and all(found.values()) or not modules.get(test):
            found[f"({test}: the run itself)"] = False  # a harness failure, or no such module
        results.update(found)
        output.append(run.stdout + run.stderr)
    return results, "\n".join(output)


def rust_from_log(log_path, tests):
    """{test name: passed} of these modules of the core's integration test program, as a saved
    `scripts/rust-tests.py` output shows them."""
    results, current = {}, None
    for line in Path(log_path).read_text().splitlines():
        running = re.match(r"\s*Running (?:tests/(\w+)/main\.rs|\S+)", line)
        if running:
            current = running.group(1)
            continue
        result = libtest_result(line)
        if result and current == PROGRAM and result[0].split("::")[0] in tests:
            results[result[0]] = result[1]
    return results


def java_from_reports():
    """{test name: passed} of the lock contract suites in the library's default-JDK reports."""
    reports = ROOT / "java" / "target" / "surefire-reports"
    return surefire_results(r for name in JAVA_CONTRACT.split(",") for r in reports.glob(f"TEST-dibs.{name}.xml"))


def java(binary):
    """{test name: passed} of the lock contract suites of the library, on this server."""
    reports = ROOT / "java" / "target" / "surefire-reports"
    for old in reports.glob("TEST-*Contract*.xml"):
        old.unlink()
    try:
        run = subprocess.run(
            ["mvn", "-q", "-B", "-ntp", "-Dcargo.skip=true", "-Dcargo.testTools.skip=true",
             "-Ddibs.jniPanic.skip=true", "-Dsurefire.failIfNoSpecifiedTests=false", "-pl", "java",
             "-am", "test", f"-Dtest={JAVA_CONTRACT}", f"-Dredis.server={binary}"],
            cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        return {"(the run itself: timed out)": False}, str(e.stdout or "") + str(e.stderr or "")
    results = surefire_results(reports.glob("TEST-*Contract*.xml"))
    if run.returncode != 0 and all(results.values()):
        results["(the run itself)"] = False
    return results, run.stdout + run.stderr


def cell(results):
    if not results:
        return "not run"
    failed = [k for k, ok in results.items() if not ok]
    if failed:
        return f"**fails** {len(failed)} of {len(results)}"
    return f"passes ({len(results)})"


def main():
    write = "--write" in sys.argv
    debian_from = None
    if "--debian-from" in sys.argv:
        debian_from = sys.argv[sys.argv.index("--debian-from") + 1]
    rows, logs, failures = [], [], 0
    found = servers()
    program = test_program()
    cells_of, logs_of, java_seconds, rust_seconds = {}, {}, {}, {}
    pending = []
    for label, binary, cli in found:
        cells_of[label], logs_of[label] = {}, {}
        java_seconds[label] = rust_seconds[label] = 0.0
        if label == "debian" and debian_from:
            # The test command's own suites ran against this server already.
            cells_of[label]["lock contract"] = java_from_reports()
            for column, tests in RUST.items():
                cells_of[label][column] = rust_from_log(debian_from, tests)
            logs_of[label]["read"] = f"== {label}: read from {debian_from} and the library's surefire reports"
        else:
            pending.append((label, binary, cli))

    # The Java contract of each server in turn (one Maven build directory), beside the Rust suites
    # of every server at once: they wait on servers and faults far more than they compute, and
    # each starts servers of its own on free ports.
    def java_rows():
        for label, binary, _ in pending:
            started = time.time()
            results, log = java(binary)
            cells_of[label]["lock contract"] = results
            logs_of[label]["lock contract"] = f"== {label}: lock contract\n{log}"
            java_seconds[label] = time.time() - started

    def rust_row(label, binary, cli):
        started = time.time()
        env = dict(os.environ, DIBS_REDIS_SERVER=binary, DIBS_REDIS_CLI=cli)
        for column, tests in RUST.items():
            results, log = rust(program, tests, env)
            cells_of[label][column] = results
            logs_of[label][column] = f"== {label}: {column}\n{log}"
        rust_seconds[label] = time.time() - started

    with ThreadPoolExecutor(max_workers=1 + len(pending)) as pool:
        jobs = [pool.submit(java_rows)] + [pool.submit(rust_row, *row) for row in pending]
        for done in jobs:
            done.result()
    for label, binary, cli in found:
        cells = cells_of[label]
        logs += [logs_of[label][part] for part in ["read", *COLUMNS] if part in logs_of[label]]
        # A column with no test at all (a binary that ran none) is a failure too.
        failures += sum(not ok for r in cells.values() for ok in r.values())
        failures += sum(not r for r in cells.values())
        name = version(binary)
        rows.append(f"| {name} | " + " | ".join(cell(cells[c]) for c in COLUMNS) + " |")
        print(f"compat-matrix: {name}: " + ", ".join(f"{c} {cell(cells[c])}" for c in COLUMNS)
              + f" (Java {java_seconds[label]:.0f} s, Rust {rust_seconds[label]:.0f} s)", flush=True)
    table = "\n".join([
        "| server | " + " | ".join(COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
        *rows,
    ]) + "\n"
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(table)
    (ROOT / "target" / "compat-matrix.log").write_text("\n".join(logs))
    print(table)
    text = README.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"compat-matrix: README.md lacks the {BEGIN} ... {END} markers")
    head, rest = text.split(BEGIN, 1)
    current, tail = rest.split(END, 1)
    current = current.strip("\n") + "\n"
    if write:
        README.write_text(f"{head}{BEGIN}\n{table}{END}{tail}")
    elif current != table:
        print("compat-matrix: README.md's table is not what this run produced; "
              "run `python3 scripts/compat-matrix.py --write` and commit it", file=sys.stderr)
        failures += 1
    if failures:
        print(f"compat-matrix: {failures} failure(s); the logs are in target/compat-matrix.log",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
