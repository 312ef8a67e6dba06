#!/usr/bin/env python3
"""Checks the Linux libraries in target/natives against what each platform promises.

- linux-x86_64, linux-aarch64: an ELF for that machine that needs no glibc symbol newer than
  GLIBC_2.17 (Amazon Linux 2, RHEL 7, Ubuntu 14.04 and later) and NEEDs only glibc's own
  libraries: libc, libm, libdl, libpthread, librt and the dynamic loader. Never libgcc_s.
- linux-x86_64-musl, linux-aarch64-musl: an ELF for that machine whose only NEEDED is musl's
  libc.so, with no glibc symbol version at all.
Every library must export the JNI entry points the Java side binds.

With --jar JAR instead: lists the libraries the jar carries, whole or as diffs
(dibs/native/<platform>.diff, scripts/native-diff.py), and fails unless it carries the four Linux
ones, stays under 6 MB, and carries NativeLoader's index dibs/native/natives.properties with a
version and, for exactly the libraries it carries, each one's sha256, size and CRC-32 (checked here for
the whole ones; NativeDiffTest checks that each diff makes the library the index names). The
natives-dir check also holds target/natives/natives.properties to its libraries the same way.

Reads the files with binutils' readelf. Usage: python3 scripts/check-natives.py [natives-dir]
or python3 scripts/check-natives.py --jar JAR, or --symbols to print the JNI entry points checked
(exit 0: all pass; 1: a check failed; 2: a platform's library is missing or unreadable)
"""

import hashlib
import re
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

GLIBC_BASELINE = (2, 17)
GLIBC_LIBS = re.compile(r"^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1"
                        r"|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$")
MACHINE = {"x86_64": "Advanced Micro Devices X86-64", "aarch64": "AArch64"}
# The Java classes whose native methods the library must export. The entry points are read from
# their sources, so a method added or removed on the Java side is checked without a list to edit.
NATIVE_CLASSES = ["dibs.NativeLib", "dibs.loader.NativeLoader"]
JAVA_SOURCES = Path(__file__).resolve().parent.parent / "java/src/main/java"


def jni_symbols() -> list:
    symbols = []
    for cls in NATIVE_CLASSES:
        source = (JAVA_SOURCES / (cls.replace(".", "/") + ".java")).read_text()
        names = re.findall(r"^\s*(?:[a-z]+\s+)*native\s+[\w\[\]<>.]+\s+(\w+)\s*\(", source, re.M)
        if not names:
            sys.exit(f"check-natives: no native method found in {cls}")
        symbols += [f"Java_{cls.replace('.', '_')}_{name}" for name in names]
    return symbols


JNI_SYMBOLS = jni_symbols()
PLATFORMS = ["linux-x86_64", "linux-aarch64", "linux-x86_64-musl", "linux-aarch64-musl"]
JAR_LIMIT = 6_000_000  # issue 32: the jar of every platform, at most 6 MB


def readelf(*args: str) -> str:
    return subprocess.run(["readelf", "--wide", *args], check=True, capture_output=True,
                          text=True).stdout


def check(platform: str, lib: Path) -> list:
    problems = []
    arch = platform.split("-")[1]
    machine = re.search(r"Machine:\s*(.+)", readelf("-h", str(lib)))
    if not machine or machine.group(1).strip() != MACHINE[arch]:
        problems.append(f"machine is {machine.group(1).strip() if machine else '?'}, not {arch}")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf("-d", str(lib)))
    versions = sorted({tuple(int(x) for x in v.split("."))
                       for v in re.findall(r"Name: GLIBC_([0-9.]+)", readelf("-V", str(lib)))})
    exported = set(re.findall(r"\sGLOBAL\s+DEFAULT\s+\d+\s+(\S+)", readelf("--dyn-syms", str(lib))))
    missing = [s for s in JNI_SYMBOLS if s not in exported]
    if missing:
        problems.append(f"does not export {', '.join(missing)}")
    if platform.endswith("-musl"):
        if needed != ["libc.so"]:
            problems.append(f"NEEDs {needed}, not only musl's libc.so")
        if versions:
            problems.append(f"has glibc symbol versions {versions}")
        summary = f"NEEDED {needed}"
    else:
        others = [n for n in needed if not GLIBC_LIBS.match(n)]
        if others:
            problems.append(f"NEEDs {others}, beyond glibc's own libraries")
        newer = [v for v in versions if v > GLIBC_BASELINE]
        if newer:
            problems.append("needs " + ", ".join("GLIBC_" + ".".join(map(str, v)) for v in newer)
                            + f", newer than the GLIBC_{'.'.join(map(str, GLIBC_BASELINE))} baseline")
        newest = "GLIBC_" + ".".join(map(str, versions[-1])) if versions else "none"
        summary = f"newest symbol {newest}, NEEDED {needed}"
    size = lib.stat().st_size
    print(f"  {platform:<20} {size:>9,} bytes  {'ok' if not problems else 'FAILED'}: {summary}")
    return problems


LIB_NAMES = ("libdibs.so", "libdibs.dylib", "dibs.dll")
INDEX = "natives.properties"


def index_problems(index_text, libs: dict, diffed=frozenset()) -> list:
    """What is wrong with NativeLoader's index for libs ({platform: bytes}) and the platforms
    carried as diffs (whose hashes java/.../NativeDiffTest checks); [] if nothing."""
    if index_text is None:
        return [f"no {INDEX} (NativeLoader's index, written by scripts/build-natives.sh)"]
    entries = {}
    for line in index_text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            entries[key.strip()] = value.strip()
    problems = [] if entries.get("version") else [f"{INDEX} names no version"]
    for platform, data in sorted(libs.items()):
        if entries.get(f"{platform}.sha256") != hashlib.sha256(data).hexdigest():
            problems.append(f"{INDEX}: {platform}.sha256 is not the sha256 of its library")
        if entries.get(f"{platform}.size") != str(len(data)):
            problems.append(f"{INDEX}: {platform}.size is not the size of its library ({len(data)})")
        if entries.get(f"{platform}.crc32") != f"{zlib.crc32(data):08x}":
            problems.append(f"{INDEX}: {platform}.crc32 is not the CRC-32 of its library")
    indexed = {k.rsplit(".", 1)[0] for k in entries if k.endswith((".sha256", ".size", ".crc32"))}
    for platform in sorted(indexed - libs.keys() - diffed):
        problems.append(f"{INDEX} names {platform}, whose library is not there")
    for platform in sorted(diffed - indexed):
        problems.append(f"{INDEX} does not name {platform}, whose diff is there")
    return problems


def check_jar(jar: Path) -> int:
    with zipfile.ZipFile(jar) as z:
        libs = [i for i in z.infolist() if i.filename.startswith("dibs/native/") and not i.is_dir()
                and i.filename.rsplit("/", 1)[-1] in LIB_NAMES]
        diffs = [i for i in z.infolist() if re.fullmatch(r"dibs/native/[^/]+\.diff", i.filename)]
        names = set(z.namelist())
        index_text = z.read("dibs/native/" + INDEX).decode() if "dibs/native/" + INDEX in names else None
        diffed = {i.filename[len("dibs/native/"):-len(".diff")] for i in diffs}
        problems = index_problems(index_text, {i.filename.split("/")[2]: z.read(i) for i in libs}, diffed)
    for i in libs + diffs:
        print(f"  {i.filename:<40} {i.file_size:>10,} bytes, {i.compress_size:>10,} compressed")
    size = jar.stat().st_size
    print(f"  {jar}: {size:,} bytes with {len(libs)} native libraries and {len(diffs)} as diffs")
    carried = {i.filename.split("/")[2] for i in libs} | diffed
    missing = [p for p in PLATFORMS if p not in carried]
    for p in problems:
        print(f"check-natives: the jar's {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"  dibs/native/{INDEX}: a version, and the sha256, size and CRC-32 of each library")
    if missing:
        print(f"check-natives: the jar carries no library for {', '.join(missing)}", file=sys.stderr)
        return 1
    if size >= JAR_LIMIT:
        print(f"check-natives: the jar is {size:,} bytes, over the 6 MB limit", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    if sys.argv[1:] in (["--help"], ["-h"]):
        print(__doc__)
        return 0
    if sys.argv[1:] == ["--symbols"]:
        print(" ".join(JNI_SYMBOLS))
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "--jar":
        return check_jar(Path(sys.argv[2]))
    natives = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("target/natives")
    failed = False
    print(f"check-natives: the Linux libraries in {natives}")
    for platform in PLATFORMS:
        lib = natives / platform / "libdibs.so"
        if not lib.is_file():
            print(f"check-natives: {lib} is missing (run scripts/build-natives.sh linux)", file=sys.stderr)
            return 2
        try:
            problems = check(platform, lib)
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"check-natives: cannot read {lib}: {e}", file=sys.stderr)
            return 2
        for p in problems:
            print(f"check-natives: {platform}: {p}", file=sys.stderr)
        failed |= bool(problems)
    present = {d.name: (d / n).read_bytes() for d in natives.iterdir() if d.is_dir()
               for n in LIB_NAMES if (d / n).is_file()}
    index = natives / INDEX
    for p in index_problems(index.read_text() if index.is_file() else None, present):
        print(f"check-natives: {natives}: {p}", file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
