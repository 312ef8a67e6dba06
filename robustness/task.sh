#!/usr/bin/env bash
# The CMD that the harness's cron hosts give `dibs run`: a task that forks a child, as a report
# script starts a helper. The child makes the fenced writes, for longer than the parent's own
# part, so that what dibs run waits for (and kills) is a process it did not start itself. Every
# event goes to the harness's ledger (robustness/harness/ledger.py), which stamps the time.
e() {
  curl -s -m 2 "$HARNESS_LEDGER/e?i=$HARNESS_INSTANCE&f=run&j=h-run&l=h-run@$HARNESS_TICK&t=$HARNESS_TICK&due=$HARNESS_DUE&c=$HARNESS_CALL&r=$HARNESS_CALL&tok=${DIBS_FENCING_TOKEN:-0}&$1"
}
e k=start >/dev/null
(
  for _ in 1 2 3 4 5 6; do e k=write >/dev/null; sleep 0.1; done
  e k=child-end >/dev/null
) &
sleep "0.$((RANDOM % 3 + 1))"
wait
e "k=end&d=ok" >/dev/null
