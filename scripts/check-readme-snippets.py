#!/usr/bin/env python3
"""Every Java, Kotlin and properties snippet of README.md and dibs-spring-boot-starter/README.md
is code that a test of examples/readme (or of examples/spring-boot) compiles and runs: each fenced block must equal a region
of those tests, the lines between `readme:begin NAME` and `readme:end` comments (`//` or `#`), the
regions of one NAME in a file joined by a blank line, each dedented. A Kotlin block that starts
with `// build.gradle.kts` is a Gradle dependency instead (Gradle does not run here): the
artifacts it names must be modules of the reactor, at its version. Exits 1 with every snippet
that matches nothing. Usage: scripts/check-readme-snippets.py
"""
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READMES = [ROOT / "README.md", ROOT / "dibs-spring-boot-starter" / "README.md"]
# The readme examples' tests, and the Spring Boot example's (its actuator's security rule).
TESTS = [ROOT / "examples" / "readme" / "src" / "test", ROOT / "examples" / "spring-boot" / "src" / "test"]
CHECKED = {"java", "kotlin", "properties"}
BEGIN = re.compile(r"^\s*(?://|#)\s*readme:begin\s+(\S+)\s*$")
END = re.compile(r"^\s*(?://|#)\s*readme:end\s*$")


def normalized(text):
    lines = [line.rstrip() for line in textwrap.dedent(text).strip("\n").splitlines()]
    return "\n".join(lines)


def regions():
    """{(file, name): text} of every region of the tests."""
    found = {}
    for path in sorted(p for tests in TESTS for p in tests.rglob("*")):
        if path.suffix not in (".java", ".kt", ".properties"):
            continue
        name, lines, parts = None, [], {}
        for number, line in enumerate(path.read_text().splitlines(), 1):
            begin, end = BEGIN.match(line), END.match(line)
            if begin:
                if name:
                    sys.exit(f"{path}:{number}: readme:begin inside region {name}")
                name, lines = begin.group(1), []
            elif end:
                if not name:
                    sys.exit(f"{path}:{number}: readme:end outside a region")
                parts.setdefault(name, []).append(normalized("\n".join(lines)))
                name = None
            elif name:
                lines.append(line)
        if name:
            sys.exit(f"{path}: region {name} has no readme:end")
        for part, texts in parts.items():
            found[(path.relative_to(ROOT), part)] = "\n\n".join(texts)
    return found


def blocks(readme):
    """(line, language, text) of each fenced block."""
    out, language, start, lines = [], None, 0, []
    for number, line in enumerate(readme.read_text().splitlines(), 1):
        fence = re.match(r"^```(\S*)\s*$", line)
        if fence and language is None:
            language, start, lines = fence.group(1), number, []
        elif line.startswith("```") and language is not None:
            out.append((start, language, "\n".join(lines)))
            language = None
        elif language is not None:
            lines.append(line)
    return out


def gradle_ok(text, errors, where):
    version = re.search(r"<revision>([^<]+)</revision>", (ROOT / "pom.xml").read_text()).group(1)
    modules = set()
    for pom in ROOT.rglob("pom.xml"):
        if "target" in pom.parts:
            continue
        artifact = re.search(r"</parent>.*?<artifactId>([^<]+)</artifactId>", pom.read_text(), re.S)
        if artifact:
            modules.add(artifact.group(1))
    named = re.findall(r'"io\.github\.dibs:([^:"]+):([^"]+)"', text)
    if not named:
        errors.append(f"{where}: a Gradle snippet that names no io.github.dibs artifact")
    for artifact, at in named:
        if artifact not in modules or at != version:
            errors.append(f"{where}: io.github.dibs:{artifact}:{at} is not a module of the reactor at {version}")


def main():
    found = regions()
    by_text = {text: key for key, text in found.items()}
    errors, matched = [], 0
    for readme in READMES:
        for line, language, text in blocks(readme):
            if language not in CHECKED:
                continue
            where = f"{readme.relative_to(ROOT)}:{line}"
            if language == "kotlin" and text.lstrip().startswith("// build.gradle.kts"):
                gradle_ok(text, errors, where)
                continue
            key = by_text.get(normalized(text))
            if key is None:
                first = normalized(text).splitlines()[0]
                errors.append(f"{where}: a {language} snippet that no test of examples/readme runs "
                              f"(starting `{first}`)")
            else:
                matched += 1
    if errors:
        print("check-readme-snippets: " + "\n  ".join(["README snippets without their test:"] + errors))
        sys.exit(1)
    print(f"check-readme-snippets: {matched} snippets of {len(READMES)} READMEs are run by "
          f"examples/readme ({len(found)} regions)")


if __name__ == "__main__":
    main()
