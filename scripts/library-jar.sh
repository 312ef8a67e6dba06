#!/usr/bin/env bash
# Prints the absolute path of the library jar that Maven built, java/target/dibs-<version>.jar,
# for the scripts that use it. The version is the root pom's <revision>: found here, not written.
# Usage: scripts/library-jar.sh [directory (default java/target)]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-java/target}
read -r -a platforms <<<"$(bash scripts/build-natives.sh --list)"
jars=()
for f in "$dir"/dibs-*.jar; do
  case "$f" in *-sources.jar | *-javadoc.jar | *-tests.jar) continue ;; esac
  for p in "${platforms[@]}"; do
    case "$f" in *-"$p".jar) continue 2 ;; esac # a release's jar of one platform
  done
  [ -f "$f" ] && jars+=("$f")
done
if [ ${#jars[@]} -ne 1 ]; then
  echo "library-jar: expected one dibs jar in $dir, found ${#jars[@]}: ${jars[*]:-none} (mvn package builds it)" >&2
  exit 1
fi
realpath "${jars[0]}"
