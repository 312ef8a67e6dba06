#!/usr/bin/env bash
# Fails when the Java test run printed JNI warnings or errors (-Xcheck:jni) or JDK 24+
# native-access warnings (JEP 472).
#
# Where they land: surefire keeps each fork's output in <module>/target/surefire-reports*/ of
# every Maven module (java/, dibs-shedlock/, ...; redirectTestOutputToFile): test output in
# *-output.txt, and whatever the JVM wrote straight to file descriptor 1, which is where
# -Xcheck:jni reports ("WARNING in native method: ..."), in *.dumpstream. The JDK's native-access
# warning goes to file descriptor 2, which surefire passes through to Maven's console: to check it
# too, save the console and name the file, e.g.
#   mvn -B verify 2>&1 | tee target/maven.log; scripts/check-jni-warnings.sh target/maven.log
#
# Usage: scripts/check-jni-warnings.sh [reports-dir | maven-log ...]
#   a directory: look for surefire-reports*/ under it (default: the whole repository, so every
#   module's target/); a file: a saved Maven console to read as well.
set -euo pipefail
cd "$(dirname "$0")/.."
roots=()
logs=()
for arg in "$@"; do
  if [ -d "$arg" ]; then roots+=("$arg"); else logs+=("$arg"); fi
done
[ ${#roots[@]} -gt 0 ] || roots=(.)

dirs=()
while IFS= read -r -d '' d; do dirs+=("$d"); done < <(
  find "${roots[@]}" \( -path ./.git -o -path ./target \) -prune -o -type d -name 'surefire-reports*' -path '*target/*' -print0 -prune)
if [ ${#dirs[@]} -eq 0 ]; then
  echo "check-jni-warnings: no surefire reports under ${roots[*]}; run the tests first" >&2
  exit 2
fi

files=()
for d in "${dirs[@]}"; do
  while IFS= read -r -d '' f; do files+=("$f"); done < <(
    find "$d" -type f \( -name '*-output.txt' -o -name '*.dumpstream' -o -name '*.dump' \) -print0)
done
for f in "${logs[@]}"; do
  [ -f "$f" ] && files+=("$f")
done
if [ ${#files[@]} -eq 0 ]; then
  echo "check-jni-warnings: no fork output files in ${#dirs[@]} report directories: the tests printed nothing (OK)"
  exit 0
fi

pattern='WARNING in native method|FATAL ERROR in native method|JNI (DETECTED|WARNING|ERROR)|JNI local refs|A restricted method in|has been called by .* in an unnamed module|to avoid a warning for callers in this module'
if grep -E -n -H -- "$pattern" "${files[@]}"; then
  echo "check-jni-warnings: JNI / native-access warnings above" >&2
  exit 1
fi
echo "check-jni-warnings: no JNI or native-access warnings in ${#files[@]} output files (${#dirs[@]} report directories)"
