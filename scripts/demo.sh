#!/usr/bin/env bash
# Shows dibs at work: builds the native library and the Java side, starts a throwaway
# redis-server, races 3 JVMs (separate processes) on 10 one-second ticks, and prints who ran
# each tick plus a summary line (ticks, executions, overlaps). Exits non-zero on an overlap or a
# missed tick. Usage: scripts/demo.sh [instances] [ticks]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh   # redis-server via apt-get when missing; checks cargo, java, mvn

echo "== building (this machine's native library only, then Java) ..."
# The library module (java/) and what it needs from the reactor (dibs-test-support); the test
# class path is written to java/target/demo.classpath.
mvn -q -B -ntp -DskipTests -Dcargo.testTools.skip=true -Ddibs.natives=host -pl java -am \
    test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/demo.classpath
classpath="java/target/test-classes:java/target/classes:$(cat java/target/demo.classpath)"

flags=(-Xcheck:jni)
feature=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
if [ "${feature%%.*}" -ge 17 ] 2>/dev/null; then
  flags+=(--enable-native-access=ALL-UNNAMED)  # JDK 24+ warns without it; 17+ accepts it
fi

echo "== running dibs.demo.Demo on $(java -version 2>&1 | head -n 1)"
exec java "${flags[@]}" -cp "$classpath" dibs.demo.Demo "$@"
