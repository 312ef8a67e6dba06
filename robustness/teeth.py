#!/usr/bin/env python3
"""Puts one known bug back into the tree it runs in, to show that the harness's checker catches it
(docs/reliability.md, "Proof that the checker has teeth"). Run it in a scratch worktree only:

  git worktree add /tmp/teeth HEAD && cd /tmp/teeth
  python3 robustness/teeth.py nx          # one of: nx token catchup record pid offset
  cargo build -p dibs-cli && mvn -pl robustness/workers -am package -DskipTests -Ddibs.natives=host
  python3 robustness/run.py --profile ci  # exits 1, with the violations, when it caught the bug
"""

import sys
from pathlib import Path

BUGS = {
    # an acquire without NX
    "nx": ("src/script/mod.rs",
           "redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])",
           "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])"),
    # a release that does not check the token
    "token": ("src/script/history.rs", "\nif current ~= ARGV[1] then\n", "\nif false then\n"),
    # catch-up that ignores the lock: its EXISTS, and the start's entry that stands for a run
    # holding it in the history (alone, the EXISTS is a second guard: no user could see it gone)
    "catchup": ("src/script/tick.rs",
                "if not retried and redis.call('EXISTS', KEYS[1]) == 1 then",
                "if false then"),
    # a history record dropped on a failed release (the lock found gone)
    "record": ("src/script/history.rs", "local function record(ended)\n",
               "local function record(ended)\n  if ended == 'no-longer-ours' or ended == 'unproven' then\n"
               "    if ARGV[8] and ARGV[8] ~= '' then redis.pcall('XDEL', KEYS[2], ARGV[8]) end\n"
               "    return\n  end\n"),
    # dibs run passing a signal on to one process (the group's leader) instead of the group
    "pid": ("crates/dibs-cli/src/descendants.rs",
            "unsafe { libc::kill(-group, signal) };", "unsafe { libc::kill(group, signal) };"),
    # a tick named without its offset in a repeated hour
    "offset": ("dibs-spring-boot-starter/src/main/java/dibs/spring/DibsScheduledTick.java",
               "return repeat ? local + fire.getOffset().getId() : local.toString();",
               "return local.toString();"),
}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in BUGS:
        sys.exit("usage: teeth.py %s" % "|".join(BUGS))
    bug = sys.argv[1]
    path, old, new = BUGS[bug]
    file = Path(__file__).resolve().parents[1] / path
    text = file.read_text()
    if old not in text:
        sys.exit("teeth: %s no longer has the line this bug replaces; update teeth.py" % path)
    if bug == "catchup":  # and the caught-up tick's SET without NX, and a start no run's
        start = text.index("static CATCH_UP_ACQUIRE")
        at = text.index("set_lua!(),", start)
        text = text[:at] + "\"\\nredis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\\n\"," + text[at + 11:]
        text = text.replace("forced = 1, started = 1}", "forced = 1}", 1)
    file.write_text(text.replace(old, new, 1))
    print("teeth: %s put back in %s" % (bug, path))


if __name__ == "__main__":
    main()
