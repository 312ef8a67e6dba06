#!/usr/bin/env python3
"""Fails when the Gradle build of the library (build.gradle.kts) drifts from Maven's, or the Java
version from the Rust one.

Maven is one reactor: the root pom.xml (the parent: <revision>, the release metadata, the test JVM
flags of every module) and the library module java/pom.xml (artifactId dibs, Java release, the
native resource directory, the virtual-thread test flags). The root build.gradle.kts builds the
same library jar. Compared:
  - coordinates: group and artifact; the version is not written in build.gradle.kts at all, which
    must read it from the root pom's <revision> (checked);
  - Java release, the native resource directory (also against NativeLoader.RESOURCE_DIR, which
    reads it at run time), the test JVM arguments (always, from JDK 24 on, for virtual threads),
    and the JUnit and Kotlin versions of the tests;
  - the POM metadata Maven Central requires: url, license, developer, scm;
  - the libraries the jar of every platform leaves out whole (java/pom.xml's default-jar
    excludes, build.gradle.kts' jar excludes): those scripts/native-diff.py carries as diffs;
  - the version: Cargo.toml's ([workspace.package] version, or [package] version) must equal the
    root pom's <revision> less -SNAPSHOT; these are the only two places it is written.
Both build files keep these values in blocks marked "build-sync"; this script reads only those
blocks, the poms' properties and the coordinates.

Usage: python3 scripts/check-build-sync.py [repo-root]   (exit 0: in sync, 1: drift, 2: unreadable)
"""

import fnmatch
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


class Unreadable(Exception):
    pass


def parse_pom(path: Path):
    try:
        return ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise Unreadable(f"{path}: {e}")


def pom_text(root, path: Path, xpath: str) -> str:
    node = root.find(xpath, POM_NS)
    if node is None or node.text is None:
        raise Unreadable(f"{path}: no {xpath}")
    return node.text.strip()


def maven_values(parent_path: Path, library_path: Path) -> dict:
    """The library's values as Maven builds it: java/pom.xml's own, else the parent's."""
    parent, library = parse_pom(parent_path), parse_pom(library_path)

    def prop(name: str) -> str:
        for root, path in ((library, library_path), (parent, parent_path)):
            node = root.find(f"m:properties/m:{name}", POM_NS)
            if node is not None and node.text is not None:
                return node.text.strip()
        raise Unreadable(f"{library_path}, {parent_path}: no property {name}")

    group = library.findtext("m:groupId", None, POM_NS) or pom_text(parent, parent_path, "m:groupId")
    return {
        "group": group.strip(),
        "artifact": pom_text(library, library_path, "m:artifactId"),
        "java release": prop("maven.compiler.release"),
        "native resource dir": prop("dibs.native.resourceDir"),
        "test JVM args": prop("dibs.test.jvmArgs").split(),
        "test JVM args on JDK 24+": prop("dibs.test.jvmArgs.jdk24plus").split(),
        "test JVM args for virtual threads": prop("dibs.test.jvmArgs.virtualThreads").split(),
        "JUnit version": prop("junit.version"),
        "Kotlin version": prop("kotlin.version"),
    }


def revision(parent_path: Path) -> str:
    root = parse_pom(parent_path)
    version = pom_text(root, parent_path, "m:version")
    if version != "${revision}":
        raise Unreadable(f"{parent_path}: <version> is {version!r}, not ${{revision}}")
    return pom_text(root, parent_path, "m:properties/m:revision")


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


def gradle_block(source: str, path: Path, label: str) -> dict:
    block = re.search(rf"// =+ build-sync{label}.*?\n(.*?)// =+ end build-sync", source, re.S)
    if not block:
        raise Unreadable(f"{path}: no '// ===== build-sync{label} ... // ===== end build-sync' block")
    return {name: parse_kotlin(expr, path, name)
            for name, expr in re.findall(r"^\s*val\s+(\w+)\s*=\s*(.+?)\s*$", block.group(1), re.M)}


def gradle_values(path: Path) -> tuple:
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as e:
        raise Unreadable(f"{path}: {e}")
    vals = gradle_block(source, path, r":? (?!release metadata)")
    meta = gradle_block(source, path, r": release metadata\b")

    def get(table: dict, name: str):
        if name not in table:
            raise Unreadable(f"{path}: the build-sync block has no 'val {name}'")
        return table[name]

    def top_level(name: str):
        m = re.search(rf"^val\s+{name}\s*=\s*(.+?)\s*$", source, re.M)
        if not m:
            raise Unreadable(f"{path}: no top-level 'val {name}'")
        return parse_kotlin(m.group(1), path, name)

    plugin = re.search(r'kotlin\("jvm"\)\s+version\s+"([^"]+)"', source)
    values = {
        "group": get(vals, "dibsGroup"),
        "artifact": get(vals, "dibsArtifact"),
        "java release": str(get(vals, "javaRelease")),
        "native resource dir": get(vals, "nativeResourceDir"),
        "test JVM args": get(vals, "testJvmArgs"),
        "test JVM args on JDK 24+": get(vals, "testJvmArgsJdk24plus"),
        "test JVM args for virtual threads": get(vals, "testJvmArgsVirtualThreads"),
        "JUnit version": top_level("junitVersion"),
        "Kotlin version": top_level("kotlinVersion"),
        "POM url": get(meta, "pomUrl"),
        "POM license": get(meta, "pomLicense"),
        "POM developer": get(meta, "pomDeveloper"),
        "POM scm": get(meta, "pomScm"),
    }
    # The Kotlin Gradle plugin's version is the compiler's: the same as the stdlib's.
    plugin_version = plugin.group(1) if plugin else None
    # Where the version comes from: the root pom's <revision>, read at configuration time, and
    # never a literal of its own.
    reads_revision = bool(re.search(r'file\("pom\.xml"\)', source)) and "<revision>" in source
    literal_version = re.search(r'^\s*version\s*=\s*"', source, re.M) or re.search(
        r'^\s*val\s+dibsVersion\s*=\s*"', source, re.M)
    return values, plugin_version, reads_revision, bool(literal_version)


def pom_release_metadata(path: Path) -> dict:
    """The POM metadata Maven Central requires beside name and description: url, the one
    license, the one developer and scm, as the root pom.xml declares them for every module."""
    root = parse_pom(path)

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


def loader_resource_dir(path: Path) -> str:
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as e:
        raise Unreadable(f"{path}: {e}")
    m = re.search(r'static final String RESOURCE_DIR\s*=\s*"([^"]*)"', source)
    if not m:
        raise Unreadable(f"{path}: no RESOURCE_DIR constant")
    return m.group(1)


def cargo_version(path: Path) -> str:
    """The version of the Rust side: [workspace.package] version, else [package] version."""
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as e:
        raise Unreadable(f"{path}: {e}")
    for table in (r"\[workspace\.package\]", r"\[package\]"):
        m = re.search(rf'^{table}[^\[]*?^version\s*=\s*"([^"]+)"', source, re.M | re.S)
        if m:
            return m.group(1)
    raise Unreadable(f"{path}: no [workspace.package] or [package] version")


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    parent_path, library_path = root / "pom.xml", root / "java" / "pom.xml"
    gradle_path = root / "build.gradle.kts"
    try:
        maven = maven_values(parent_path, library_path)
        maven.update(pom_release_metadata(parent_path))
        gradle, kotlin_plugin, reads_revision, literal_version = gradle_values(gradle_path)
        java_version = revision(parent_path)
        native_version = cargo_version(root / "Cargo.toml")
        loader_dir = loader_resource_dir(root / "java/src/main/java/dibs/loader/NativeLoader.java")
    except Unreadable as e:
        print(f"check-build-sync: cannot read the build files: {e}", file=sys.stderr)
        return 2

    drift = [f"  {key}: Maven has {maven[key]!r}, build.gradle.kts has {gradle[key]!r}"
             for key in maven if maven[key] != gradle[key]]
    if kotlin_plugin != maven["Kotlin version"]:
        drift.append(f"  Kotlin version: Maven has {maven['Kotlin version']!r}, build.gradle.kts' "
                     f"kotlin(\"jvm\") plugin has {kotlin_plugin!r}")
    if not reads_revision or literal_version:
        drift.append("  version: build.gradle.kts must read it from the root pom.xml's <revision> "
                     "(file(\"pom.xml\")), not write one of its own")
    if maven["native resource dir"] != loader_dir:
        drift.append(f"  native resource dir: java/pom.xml has {maven['native resource dir']!r}, "
                     f"NativeLoader.RESOURCE_DIR is {loader_dir!r}")
    # The release's jar per platform: java/pom.xml writes one execution per platform; Gradle
    # reads the list from scripts/build-natives.sh --list, which owns it.
    platforms = subprocess.run(["bash", str(root / "scripts/build-natives.sh"), "--list"], check=True,
                               capture_output=True, text=True).stdout.split()
    classifiers = re.findall(r"<classifier>([^<]+)</classifier>", library_path.read_text())
    if classifiers != platforms:
        drift.append(f"  platform jars: java/pom.xml's release profile makes {classifiers}, "
                     f"scripts/build-natives.sh --list names {platforms}")
    if "scripts/build-natives.sh\", \"--list" not in gradle_path.read_text():
        drift.append("  platform jars: build.gradle.kts must read the platforms from scripts/build-natives.sh --list")
    # The jar of every platform leaves out, whole, exactly the libraries it carries as diffs:
    # scripts/native-diff.py's BASE owns which; both builds' excludes must cover the same ones.
    pom_excludes = re.findall(r"<exclude>\$\{dibs\.native\.resourceDir\}/([^<]+)</exclude>",
                              library_path.read_text())
    gradle_excludes = re.findall(r'"\$nativeResourceDir/([^"]+)"', gradle_path.read_text().split("tasks.jar {", 1)[-1]
                                 .split("\n}", 1)[0])
    diffed = sorted(re.findall(r'^    "([a-z0-9_-]+)": "[a-z0-9_-]+",$',
                               (root / "scripts/native-diff.py").read_text(), re.M))
    covered = sorted(p for p in platforms for pattern in pom_excludes
                     if fnmatch.fnmatch(p, pattern.split("/", 1)[0]))
    if sorted(pom_excludes) != sorted(gradle_excludes):
        drift.append(f"  the jar of every platform: java/pom.xml's default-jar excludes {pom_excludes}, "
                     f"build.gradle.kts' jar excludes {gradle_excludes}")
    if covered != diffed:
        drift.append(f"  the jar of every platform leaves out, whole, {covered}; "
                     f"scripts/native-diff.py carries {diffed} as diffs")
    # The loader refuses a native library of another version than the jar's.
    if java_version.removesuffix("-SNAPSHOT") != native_version:
        drift.append(f"  version: pom.xml's <revision> is {java_version!r}, Cargo.toml's version is "
                     f"{native_version!r} (they must match, less -SNAPSHOT)")
    if drift:
        print("check-build-sync: the builds disagree:\n" + "\n".join(drift), file=sys.stderr)
        print("Change both sides (the 'build-sync' blocks, <revision> and Cargo.toml's version) so "
              "that they say the same.", file=sys.stderr)
        return 1
    summary = ", ".join(f"{k}={' '.join(v) if isinstance(v, list) else v}" for k, v in maven.items())
    print(f"check-build-sync: pom.xml + java/pom.xml and build.gradle.kts agree ({summary}); "
          f"version {java_version} (pom.xml <revision>) and {native_version} (Cargo.toml) agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
