#!/usr/bin/env bash
# Fails when a test password (scripts/test-passwords.txt) appears in the captured output of the
# test suite: the console logs given as arguments and every surefire report of the Maven modules
# (<module>/target/surefire-reports*).
# Usage: scripts/check-no-leaks.sh LOG...
set -euo pipefail
cd "$(dirname "$0")/.."
files=("$@")
while IFS= read -r -d '' f; do files+=("$f"); done < <(
  find . \( -path ./.git -o -path ./target \) -prune -o -path '*target/surefire-reports*' -type f -print0 2>/dev/null)
[ ${#files[@]} -gt 0 ] || { echo "check-no-leaks: nothing to check" >&2; exit 2; }
leaks=0
while IFS= read -r secret; do
  case "$secret" in ''|'#'*) continue ;; esac
  # The test sources hold the passwords; the reports must not.
  if grep -F -l -- "$secret" "${files[@]}" 2>/dev/null; then
    echo "check-no-leaks: a test password appears in the files above" >&2
    leaks=$((leaks + 1))
  fi
done < scripts/test-passwords.txt
[ "$leaks" -eq 0 ] || exit 1
echo "check-no-leaks: no test password in ${#files[@]} captured output files"
echo "leaks=0" > target/reliability/leaks.txt
