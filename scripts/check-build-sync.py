#!/usr/bin/env python3
"""Fails when pom.xml and build.gradle.kts drift apart.

Compares, between the two builds: group, artifact, version, Java release, the native resource
directory (also against NativeLoader.RESOURCE_DIR, which reads it at run time), and the test JVM
arguments (always, and from JDK 24 on). Also that the jar's version (less -SNAPSHOT),
NativeLoader.VERSION and Cargo.toml's version are one, since the loader refuses any other. And
the POM metadata Maven Central requires: url, license, developer, scm (pom.xml's
"release-metadata" block, build.gradle.kts' "build-sync: release metadata" block). Both build files keep these values in blocks marked
"build-sync"; this script reads only those blocks (and the pom's coordinates).

The modules beside the root (dibs-shedlock, dibs-spring-boot-starter, dibs-kotlin), each a build
of its own with a pom.xml and a build.gradle.kts, are compared too: coordinates, the versions
they build against, the Java or JVM target, the test JVM arguments and the release metadata,
from the pom and from build.gradle.kts' top-level vals (MODULE_VALS below).

Usage: python3 scripts/check-build-sync.py [repo-root]   (exit 0: in sync, 1: drift, 2: unreadable)
"""

import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


class Unreadable(Exception):
    pass


def pom_values(path: Path) -> dict:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise Unreadable(f"{path}: {e}")

    def text(xpath: str) -> str:
        node = root.find(xpath, POM_NS)
        if node is None or node.text is None:
            raise Unreadable(f"{path}: no {xpath}")
        return node.text.strip()

    def prop(name: str) -> str:
        return text(f"m:properties/m:{name}")

    return {
        "group": text("m:groupId"),
        "artifact": text("m:artifactId"),
        "version": text("m:version"),
        "java release": prop("maven.compiler.release"),
        "native resource dir": prop("dibs.native.resourceDir"),
        "test JVM args": prop("dibs.test.jvmArgs").split(),
        "test JVM args on JDK 24+": prop("dibs.test.jvmArgs.jdk24plus").split(),
        "test JVM args for virtual threads": prop("dibs.test.jvmArgs.virtualThreads").split(),
    }


def gradle_values(path: Path) -> dict:
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as e:
        raise Unreadable(f"{path}: {e}")
    block = re.search(r"// =+ build-sync\b.*?\n(.*?)// =+ end build-sync", source, re.S)
    if not block:
        raise Unreadable(f"{path}: no '// ===== build-sync ... // ===== end build-sync' block")
    vals = {}
    for name, expr in re.findall(r"^\s*val\s+(\w+)\s*=\s*(.+?)\s*$", block.group(1), re.M):
        vals[name] = parse_kotlin(expr, path, name)

    def get(name: str):
        if name not in vals:
            raise Unreadable(f"{path}: the build-sync block has no 'val {name}'")
        return vals[name]

    return {
        "group": get("dibsGroup"),
        "artifact": get("dibsArtifact"),
        "version": get("dibsVersion"),
        "java release": str(get("javaRelease")),
        "native resource dir": get("nativeResourceDir"),
        "test JVM args": get("testJvmArgs"),
        "test JVM args on JDK 24+": get("testJvmArgsJdk24plus"),
        "test JVM args for virtual threads": get("testJvmArgsVirtualThreads"),
    }


def parse_kotlin(expr: str, path: Path, name: str):
    """A Kotlin literal: "string", integer, or listOf("a", "b")."""
    expr = re.sub(r'\s*//[^"]*$', "", expr).strip()  # a trailing comment
    m = re.fullmatch(r'"([^"\\$]*)"', expr)
    if m:
        return m.group(1)
    if re.fullmatch(r"\d+", expr):
        return expr
    m = re.fullmatch(r"listOf\((.*)\)", expr)
    if m:
        items = m.group(1).strip()
        if not items:
            return []
        parts = [p.strip() for p in items.split(",")]
        if all(re.fullmatch(r'"[^"\\$]*"', p) for p in parts):
            return [p[1:-1] for p in parts]
    raise Unreadable(f"{path}: 'val {name} = {expr}' is not a plain literal this script can read")


def loader_constant(path: Path, name: str) -> str:
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as e:
        raise Unreadable(f"{path}: {e}")
    m = re.search(rf'static final String {name}\s*=\s*"([^"]*)"', source)
    if not m:
        raise Unreadable(f"{path}: no {name} constant")
    return m.group(1)


def cargo_version(path: Path) -> str:
    """The [workspace.package] version of Cargo.toml: what the native library reports at load."""
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as e:
        raise Unreadable(f"{path}: {e}")
    m = re.search(r'^\[workspace\.package\][^\[]*?^version\s*=\s*"([^"]+)"', source, re.M | re.S)
    if not m:
        raise Unreadable(f"{path}: no [workspace.package] version")
    return m.group(1)


def pom_release_metadata(path: Path) -> dict:
    """The POM metadata Maven Central requires beside name and description: url, the one
    license, the one developer and scm, as pom.xml declares them."""
    root = ET.parse(path).getroot()  # pom_values() has parsed it already

    def texts(xpath: str, *children: str) -> list:
        nodes = root.findall(xpath, POM_NS)
        if len(nodes) != 1:
            raise Unreadable(f"{path}: {len(nodes)} {xpath}, this script compares exactly one")
        vals = []
        for child in children:
            node = nodes[0].find(f"m:{child}", POM_NS)
            if node is None or node.text is None:
                raise Unreadable(f"{path}: no {xpath}/{child}")
            vals.append(node.text.strip())
        return vals

    return {
        "POM url": root.findtext("m:url", "", POM_NS).strip(),
        "POM license": texts("m:licenses/m:license", "name", "url"),
        "POM developer": texts("m:developers/m:developer", "id", "name", "url"),
        "POM scm": texts("m:scm", "connection", "developerConnection", "url"),
    }


def gradle_release_metadata(path: Path) -> dict:
    """The same, from build.gradle.kts' "build-sync: release metadata" block."""
    source = path.read_text(encoding="utf-8")
    block = re.search(r"// =+ build-sync: release metadata\b.*?\n(.*?)// =+ end build-sync", source, re.S)
    if not block:
        raise Unreadable(f"{path}: no '// ===== build-sync: release metadata' block")
    vals = {name: parse_kotlin(expr, path, name)
            for name, expr in re.findall(r"^\s*val\s+(\w+)\s*=\s*(.+?)\s*$", block.group(1), re.M)}
    keys = {"POM url": "pomUrl", "POM license": "pomLicense", "POM developer": "pomDeveloper",
            "POM scm": "pomScm"}
    missing = [v for v in keys.values() if v not in vals]
    if missing:
        raise Unreadable(f"{path}: the release metadata block has no 'val {missing[0]}'")
    return {key: vals[name] for key, name in keys.items()}


MODULES = ["dibs-shedlock", "dibs-spring-boot-starter", "dibs-kotlin"]
# pom.xml property -> build.gradle.kts top-level val, compared where the pom has the property.
MODULE_VALS = {
    "dibs.version": "dibsVersion",
    "shedlock.version": "shedlockVersion",
    "junit.version": "junitVersion",
    "spring-boot.version": "springBootVersion",
    "spring-boot4.version": "springBoot4Version",
    "coroutines.version": "coroutinesVersion",
    "maven.compiler.release": "javaRelease",
    "kotlin.compiler.jvmTarget": "jvmRelease",
    "dibs.test.jvmArgs": "testJvmArgs",
}


def module_drift(root: Path, module: str) -> list:
    """What a module's pom.xml and build.gradle.kts disagree on, as lines for the report."""
    pom_path, gradle_path = root / module / "pom.xml", root / module / "build.gradle.kts"
    try:
        pom_root = ET.parse(pom_path).getroot()
        source = gradle_path.read_text(encoding="utf-8")
    except (OSError, ET.ParseError) as e:
        raise Unreadable(f"{module}: {e}")
    vals = {}
    for name, expr in re.findall(r"^val\s+(\w+)\s*=\s*(.+?)\s*$", source, re.M):
        try:
            vals[name] = parse_kotlin(expr, gradle_path, name)
        except Unreadable:
            pass  # not a literal (a task, a configuration): not compared
    pom = {}
    gradle = {}
    for tag, val in (("groupId", "dibsGroup"), ("artifactId", "dibsArtifact"), ("version", "dibsVersion")):
        pom[tag] = pom_root.findtext(f"m:{tag}", "", POM_NS).strip()
        gradle[tag] = vals.get(val)
    for prop, val in MODULE_VALS.items():
        text = pom_root.findtext(f"m:properties/m:{prop}", None, POM_NS)
        if text is None:
            continue
        pom[prop] = text.split() if prop == "dibs.test.jvmArgs" else text.strip()
        gradle[prop] = vals.get(val)
    kotlin = pom_root.findtext("m:properties/m:kotlin.version", None, POM_NS)
    if kotlin is not None:
        m = re.search(r'kotlin\("jvm"\)\s+version\s+"([^"]+)"', source)
        pom["kotlin.version"] = kotlin.strip()
        gradle["kotlin.version"] = m.group(1) if m else None
    pom.update(pom_release_metadata(pom_path))
    for key, val in (("POM url", "pomUrl"), ("POM license", "pomLicense"), ("POM developer", "pomDeveloper"),
                     ("POM scm", "pomScm")):
        gradle[key] = vals.get(val)
    return [f"  {module}: {key}: pom.xml has {pom[key]!r}, build.gradle.kts has {gradle[key]!r}"
            for key in pom if pom[key] != gradle[key]]


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    pom_path, gradle_path = root / "pom.xml", root / "build.gradle.kts"
    loader_path = root / "java/src/main/java/dibs/NativeLoader.java"
    try:
        pom, gradle = pom_values(pom_path), gradle_values(gradle_path)
        pom.update(pom_release_metadata(pom_path))
        gradle.update(gradle_release_metadata(gradle_path))
        loader_dir = loader_constant(loader_path, "RESOURCE_DIR")
        loader_version = loader_constant(loader_path, "VERSION")
        native_version = cargo_version(root / "Cargo.toml")
    except Unreadable as e:
        print(f"check-build-sync: cannot read the build files: {e}", file=sys.stderr)
        return 2

    drift = []
    try:
        for module in MODULES:
            if (root / module / "pom.xml").exists():
                drift += module_drift(root, module)
    except Unreadable as e:
        print(f"check-build-sync: cannot read the build files: {e}", file=sys.stderr)
        return 2
    for key in pom:
        if pom[key] != gradle[key]:
            drift.append(f"  {key}: pom.xml has {pom[key]!r}, build.gradle.kts has {gradle[key]!r}")
    if pom["native resource dir"] != loader_dir:
        drift.append(f"  native resource dir: pom.xml has {pom['native resource dir']!r}, "
                     f"NativeLoader.RESOURCE_DIR is {loader_dir!r}")
    # The jar refuses a native library of another version, so the three must say the same.
    jar_version = pom["version"].removesuffix("-SNAPSHOT")
    if not (jar_version == loader_version == native_version):
        drift.append(f"  version: pom.xml has {pom['version']!r}, NativeLoader.VERSION is "
                     f"{loader_version!r}, Cargo.toml has {native_version!r}")
    if drift:
        print("check-build-sync: pom.xml and build.gradle.kts disagree:\n" + "\n".join(drift),
              file=sys.stderr)
        print("Change both (the 'build-sync' blocks) so that they say the same.", file=sys.stderr)
        return 1
    summary = ", ".join(f"{k}={' '.join(v) if isinstance(v, list) else v}" for k, v in pom.items())
    print(f"check-build-sync: pom.xml and build.gradle.kts agree ({summary}); so do those of "
          f"{', '.join(m for m in MODULES if (root / m / 'pom.xml').exists())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
