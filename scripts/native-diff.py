#!/usr/bin/env python3
"""Writes the form in which the jar of every platform carries each library that is not a base.

The jar of every platform carries linux-x86_64's and linux-aarch64's libraries whole, and every
other library as the bytes that turn a base into it: the musl libraries differ from the glibc
ones of their machine in little but libc, and macOS's and Windows' share most of their code with
Linux's of the same machine. That takes the jar from 7.9 to about 5 MB. Each platform's own jar
(java/pom.xml's release profile) still carries its library whole.

For each library in NATIVES/<platform>/<lib> whose platform has a base in BASE, this writes
NATIVES/<platform>.diff, made from the base's library when it is there, else holding the library
whole (a build of one platform, e.g. on a Mac). A diff that is already right (same base, same
library, by size and CRC-32) is kept; a diff whose library is gone is deleted.

The format, which java/src/main/java/dibs/loader/NativeDiff.java reads (big-endian):
  "DIBSDIF1"                      8 bytes
  base platform                   2-byte length + ASCII; empty when the library is held whole
  base size, base CRC-32          8 + 4 bytes (0, 0 when held whole)
  library size, library CRC-32    8 + 4 bytes
  steps                           4 bytes, then per step: add, copy, seek (4 bytes each, seek signed)
  the added bytes                 the sum of every add
  the copied bytes                the sum of every copy
Making the library: a position in the base (old) and one in the library (new) start at 0. Each step
writes `add` bytes, each the base's byte plus the next added byte (mod 256), moving both positions;
then the next `copy` copied bytes as they are, moving the new position; then moves the old position
by `seek`. The matches come from bsdiff (Colin Percival's algorithm, PyPI's bsdiff4, pinned by
scripts/build-natives.sh), whose patch this rewrites in the form above.

Usage: native-diff.py NATIVES (prints what it wrote; exit 1 on a malformed bsdiff patch)
"""

import bz2
import os
import struct
import sys
import zlib
from pathlib import Path

MAGIC = b"DIBSDIF1"
# platform -> the platform whose library its diff starts from. Bases are carried whole.
BASE = {
    "linux-x86_64-musl": "linux-x86_64",
    "linux-aarch64-musl": "linux-aarch64",
    "macos-x86_64": "linux-x86_64",
    "macos-aarch64": "linux-aarch64",
    "windows-x86_64": "linux-x86_64",
}
LIB_NAMES = ("libdibs.so", "libdibs.dylib", "dibs.dll")


def library(natives: Path, platform: str):
    for name in LIB_NAMES:
        f = natives / platform / name
        if f.is_file():
            return f
    return None


def crc(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def header(base_name: str, base: bytes, new: bytes, steps: int) -> bytes:
    name = base_name.encode("ascii")
    return (MAGIC + struct.pack(">H", len(name)) + name
            + struct.pack(">qIqIi", len(base), crc(base), len(new), crc(new), steps))


def offtin(b: bytes) -> int:
    """bsdiff's 8-byte integer: little-endian magnitude, the sign in the top bit."""
    value = int.from_bytes(b, "little") & ~(1 << 63)
    return -value if b[7] & 0x80 else value


def from_bsdiff(patch: bytes, new: bytes):
    """(steps, added bytes, copied bytes) of a BSDIFF40 patch from old to new."""
    if patch[:8] != b"BSDIFF40":
        sys.exit("native-diff: bsdiff4 did not write a BSDIFF40 patch")
    ctrl_len, diff_len, new_size = offtin(patch[8:16]), offtin(patch[16:24]), offtin(patch[24:32])
    ctrl = bz2.decompress(patch[32:32 + ctrl_len])
    added = bz2.decompress(patch[32 + ctrl_len:32 + ctrl_len + diff_len])
    copied = bz2.decompress(patch[32 + ctrl_len + diff_len:])
    steps = [tuple(offtin(ctrl[i + 8 * k:i + 8 * k + 8]) for k in range(3)) for i in range(0, len(ctrl), 24)]
    if new_size != len(new) or sum(s[0] for s in steps) != len(added) or sum(s[1] for s in steps) != len(copied):
        sys.exit("native-diff: the bsdiff patch's lengths do not add up")
    for add, copy, seek in steps:
        if not (0 <= add < 2**31 and 0 <= copy < 2**31 and -2**31 <= seek < 2**31):
            sys.exit("native-diff: a bsdiff step does not fit 4 bytes")
    return steps, added, copied


def make(base_name: str, old: bytes, new: bytes) -> bytes:
    if not base_name:
        steps, added, copied = [(0, len(new), 0)], b"", new
    else:
        import bsdiff4  # only where a base is there; scripts/build-natives.sh installs it
        steps, added, copied = from_bsdiff(bsdiff4.diff(old, new), new)
    body = b"".join(struct.pack(">iii", *s) for s in steps)
    return header(base_name, old, new, len(steps)) + body + added + copied


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if sys.argv[1:] in (["-h"], ["--help"]) else 64
    natives = Path(sys.argv[1])
    for stale in natives.glob("*.diff"):
        if stale.stem not in BASE or library(natives, stale.stem) is None:
            stale.unlink()
            print(f"  {stale.name}: deleted, its library is gone")
    for platform, base_platform in sorted(BASE.items()):
        lib = library(natives, platform)
        if lib is None:
            continue
        new = lib.read_bytes()
        base_lib = library(natives, base_platform)
        base_name, old = (base_platform, base_lib.read_bytes()) if base_lib else ("", b"")
        out = natives / f"{platform}.diff"
        want = header(base_name, old, new, 0)[:-4]  # all but the step count
        if out.is_file() and out.read_bytes()[:len(want)] == want:
            print(f"  {out.name}: up to date")
            continue
        data = make(base_name, old, new)
        part = out.with_name(out.name + ".part")
        part.write_bytes(data)
        os.replace(part, out)  # whole or not there: the check above reads only the header
        deflated = len(zlib.compress(data, 6))
        print(f"  {out.name}: {len(new):,} bytes {'from ' + base_name if base_name else 'whole'},"
              f" {deflated:,} deflated (the library alone: {len(zlib.compress(new, 6)):,})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
