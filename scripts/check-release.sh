#!/usr/bin/env bash
# Proves, locally, that what a release deploys meets Maven Central's rules, without Central's
# Portal and without any secret: builds the release (-Prelease) of the root reactor, signed with
# a throwaway GPG key, into a file repository instead of Central, then checks that repository.
#
# Usage: scripts/check-release.sh [--all-platforms]
#   --all-platforms  also fail unless the jar carries all 7 platforms' libraries (the release
#                    workflow's assembled jar); by default the jar must carry exactly what
#                    target/natives holds, and an empty target/natives is only a note.
#
# Checked, in target/release-repo/io/github/dibs/<module>/<version>/, for each published module
# (PUBLISHED below: the parent, the library, dibs-shedlock, the starter, dibs-kotlin):
#   - the main jar, -sources.jar, -javadoc.jar and .pom (the parent: its .pom), and the library's
#     jar per platform (-<platform>.jar), each with a .asc
#     signature that `gpg --verify` accepts and .md5/.sha1 checksums that match;
#   - the POM has name, description, url, licenses, developers and scm, and stands alone: the
#     version resolved (no ${revision}) and no <parent>;
#   - the modules that are not published (test support, the Boot 4 rerun, the example) are not
#     there;
# and for the library, in .../io/github/dibs/dibs/<version>/:
#   - the javadoc jar has pages (index.html, dibs/Dibs.html), the sources jar has sources;
#   - the main jar carries every library in target/natives/<platform>/<lib>, byte for byte: at
#     dibs/native/<platform>/<lib> (the glibc ones) or as its diff dibs/native/<platform>.diff,
#     the same as target/natives/<platform>.diff (scripts/native-diff.py), never both (its size
#     limit is scripts/check-natives.py --jar's, which the test command runs on the same jar);
#   - the jar of each platform it carries holds the classes and that library alone, whole, at
#     most 2 MB.
# A SNAPSHOT version deploys with timestamped file names (dibs-1.2.3-20260101.120000-1.jar); the
# names are read from the deployed maven-metadata.xml. Central itself would refuse a SNAPSHOT
# as a release: that is printed as a note, since the version is set when releasing.
#
# Needs a JDK, Maven and python3; installs gnupg with apt-get when gpg is missing. The only
# network it uses is Maven Central, for Maven's plugins. The natives are not built here
# (-Dcargo.skip=true): it packages whatever scripts/build-natives.sh left in target/natives.
set -euo pipefail
cd "$(dirname "$0")/.."

read -r -a ALL_PLATFORMS <<<"$(bash scripts/build-natives.sh --list)"
require_all=false
case "${1:-}" in
  "") ;;
  --all-platforms) require_all=true ;;
  *) echo "usage: scripts/check-release.sh [--all-platforms]" >&2; exit 64 ;;
esac

start=$SECONDS
REPO=target/release-repo
LOG_DIR=target/release-check
failures=0
notes=()
ok() { printf '  ok    %s\n' "$*"; }
miss() { printf '  MISS  %s\n' "$*"; failures=$((failures + 1)); }
note() { printf '  note  %s\n' "$*"; notes+=("$*"); }

# --- tools --------------------------------------------------------------------------------
missing_pkgs=()
command -v gpg >/dev/null 2>&1 || missing_pkgs+=(gnupg)
command -v python3 >/dev/null 2>&1 || missing_pkgs+=(python3)
if [ ${#missing_pkgs[@]} -gt 0 ]; then
  echo "== installing ${missing_pkgs[*]} with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing_pkgs[@]}" >/dev/null
fi
for tool in mvn java gpg python3 md5sum sha1sum; do
  command -v "$tool" >/dev/null 2>&1 || { echo "check-release: '$tool' is missing" >&2; exit 2; }
done

# --- a throwaway key, in a keyring of its own ---------------------------------------------
GNUPGHOME=$(mktemp -d)
export GNUPGHOME
chmod 700 "$GNUPGHOME"
cleanup() {
  gpgconf --kill gpg-agent >/dev/null 2>&1 || true # the agent of this GNUPGHOME only
  rm -rf "$GNUPGHOME"
}
trap cleanup EXIT
echo "== a throwaway signing key in $GNUPGHOME"
gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
  --quick-gen-key 'dibs release check (throwaway) <release-check@dibs.invalid>' ed25519 sign 1d 2>/dev/null
key=$(gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')
echo "   key $key"

# --- the release build, into a file repository ----------------------------------------------
rm -rf "$REPO"
mkdir -p "$LOG_DIR"
echo "== mvn -Prelease clean deploy into $REPO (log: $LOG_DIR/maven.log)"
mvn_start=$SECONDS
# clean: a release builds from a fresh checkout, so no library left in java/target/classes by an
# earlier build may reach the jar here either (target/natives is Cargo's side: the root pom's
# clean leaves the root target/ alone).
if ! mvn -B -ntp -Prelease -Dcargo.skip=true -DskipTests clean deploy \
  -DaltDeploymentRepository=local::file:"$REPO" >"$LOG_DIR/maven.log" 2>&1; then
  tail -n 40 "$LOG_DIR/maven.log"
  echo "check-release: the release build failed (see $LOG_DIR/maven.log)" >&2
  exit 1
fi
mvn_time=$((SECONDS - mvn_start))
echo "   built, signed and deployed in ${mvn_time} s"
if grep -q -- '--- central-publishing' "$LOG_DIR/maven.log"; then
  miss "the central-publishing plugin ran on the file-repository path (see $LOG_DIR/maven.log)"
fi

# --- which files: release names, or a SNAPSHOT's timestamped ones --------------------------
PUBLISHED=(dibs-parent:pom dibs:jar dibs-shedlock:jar dibs-spring-boot-starter:jar dibs-kotlin:jar)
UNPUBLISHED=(io/github/dibs/dibs-test-support io/github/dibs/dibs-spring-boot-starter-boot4-test
  io/github/dibs/examples io/github/dibs/dibs-bench)

# The deployed files' common prefix for artifactId $1: <dir>/<artifactId>-<version or stamp>.
deployed_base() {
  local artifact=$1 d v stamp
  d=$(find "$REPO/io/github/dibs/$artifact" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | head -n 1)
  [ -n "$d" ] || return 1
  v=$(basename "$d")
  if [[ "$v" == *-SNAPSHOT ]]; then
    stamp=$(python3 - "$d/maven-metadata.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
snap = ET.parse(sys.argv[1]).getroot().find("versioning/snapshot")
print(f"{snap.findtext('timestamp')}-{snap.findtext('buildNumber')}")
EOF
)
    echo "$d/$artifact-${v%-SNAPSHOT}-$stamp"
  else
    echo "$d/$artifact-$v"
  fi
}

base=$(deployed_base dibs) || { echo "check-release: nothing deployed under $REPO/io/github/dibs/dibs" >&2; exit 1; }
dir=${base%/*}
version=$(basename "$dir")
if [[ "$version" == *-SNAPSHOT ]]; then
  note "version $version: deployed as ${base##*/}.*; Central accepts no SNAPSHOT as a release (set the version before tagging)"
fi

for entry in "${PUBLISHED[@]}"; do
  artifact=${entry%%:*}
  packaging=${entry##*:}
  if ! module_base=$(deployed_base "$artifact"); then
    miss "$artifact: nothing deployed under $REPO/io/github/dibs/$artifact"
    continue
  fi
  [ "$(basename "${module_base%/*}")" = "$version" ] || miss "$artifact: version $(basename "${module_base%/*}"), not $version"
  echo "== $artifact: artifacts, signatures, checksums (${module_base%/*})"
  suffixes=(.jar -sources.jar -javadoc.jar .pom)
  [ "$packaging" = pom ] && suffixes=(.pom)
  if [ "$artifact" = dibs ]; then # and a jar per platform (scripts/check-platform-jars.sh checks what each carries)
    for p in "${ALL_PLATFORMS[@]}"; do suffixes+=("-$p.jar"); done
  fi
  for suffix in "${suffixes[@]}"; do
    f="$module_base$suffix"
    name=${f##*/}
    if [ ! -s "$f" ]; then
      miss "$name: not deployed"
      continue
    fi
    if [ ! -f "$f.asc" ]; then
      miss "$name.asc: no signature"
    elif gpg --batch --verify "$f.asc" "$f" >/dev/null 2>&1; then
      ok "$name.asc: good signature"
    else
      miss "$name.asc: gpg --verify rejects it"
    fi
    for sum in md5 sha1; do
      if [ ! -f "$f.$sum" ]; then
        miss "$name.$sum: missing"
      elif [ "$(tr -d ' \n\r' <"$f.$sum" | cut -c1-40)" = "$("${sum}sum" "$f" | cut -d' ' -f1)" ]; then
        ok "$name.$sum: matches"
      else
        miss "$name.$sum: does not match the file"
      fi
    done
  done

  echo "== $artifact: POM metadata (${module_base##*/}.pom)"
  pom_report=$(python3 - "$module_base.pom" <<'EOF'
import sys, xml.etree.ElementTree as ET
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError) as e:
    print(f"MISS\tthe POM cannot be read: {e}")
    sys.exit()
def text(path):
    node = root.find(path, ns)
    return " ".join(node.text.split()) if node is not None and node.text and node.text.strip() else ""
def field(label, *paths):
    vals = [text(p) for p in paths]
    if all(vals):
        shown = ", ".join(vals)
        print(f"ok\t{label}: {shown[:90]}{'...' if len(shown) > 90 else ''}")
    else:
        print(f"MISS\t{label}: missing " + ", ".join(p for p, v in zip(paths, vals) if not v))
field("coordinates", "m:groupId", "m:artifactId", "m:version")
field("name", "m:name")
field("description", "m:description")
field("url", "m:url")
licenses = root.findall("m:licenses/m:license", ns)
if licenses:
    for i, _ in enumerate(licenses, 1):
        field(f"license {i}", f"m:licenses/m:license[{i}]/m:name", f"m:licenses/m:license[{i}]/m:url")
else:
    print("MISS\tlicenses: none")
developers = root.findall("m:developers/m:developer", ns)
if developers:
    for i, _ in enumerate(developers, 1):
        field(f"developer {i}", f"m:developers/m:developer[{i}]/m:name")
else:
    print("MISS\tdevelopers: none")
field("scm", "m:scm/m:url", "m:scm/m:connection")
# Flattened: a consumer reads this POM alone, without the parent or the reactor's properties.
unresolved = sorted({e.text.strip() for e in root.iter() if e.text and "${" in e.text})
if root.find("m:parent", ns) is not None:
    print("MISS\tflattened: the POM still names a <parent>")
elif unresolved:
    print("MISS\tflattened: unresolved " + ", ".join(unresolved)[:90])
else:
    print("ok\tflattened: no <parent>, no ${...} left")
EOF
)
  while IFS=$'\t' read -r verdict text; do
    if [ "$verdict" = ok ]; then ok "$text"; else miss "$text"; fi
  done <<<"$pom_report"
done

echo "== not published"
for path in "${UNPUBLISHED[@]}"; do
  if [ -e "$REPO/$path" ]; then
    miss "$path: deployed, though the module is not published (dibs.publish.skip)"
  else
    ok "$path: not deployed"
  fi
done

echo "== jar contents"
# zip entries: "<name>\t<sha256>" for each file, via python (no unzip needed).
entries() {
  python3 - "$1" <<'EOF'
import hashlib, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        if not i.is_dir():
            print(f"{i.filename}\t{hashlib.sha256(z.read(i)).hexdigest()}")
EOF
}
if [ -s "$base-javadoc.jar" ]; then
  javadoc_entries=$(entries "$base-javadoc.jar" | cut -f1)
  count=$(grep -c . <<<"$javadoc_entries" || true)
  if grep -qx 'index.html' <<<"$javadoc_entries" && grep -qE '(^|/)dibs/Dibs\.html$' <<<"$javadoc_entries"; then
    ok "javadoc jar: $count files, index.html and dibs/Dibs.html among them"
  else
    miss "javadoc jar: $count files, without index.html or dibs/Dibs.html"
  fi
fi
if [ -s "$base-sources.jar" ]; then
  if entries "$base-sources.jar" | cut -f1 | grep -qx 'dibs/Dibs.java'; then
    ok "sources jar: $(entries "$base-sources.jar" | grep -c $'\\.java\t') .java files, dibs/Dibs.java among them"
  else
    miss "sources jar: no dibs/Dibs.java"
  fi
fi
if [ -s "$base.jar" ]; then
  main_entries=$(entries "$base.jar")
  if grep -q $'^dibs/Dibs\\.class\t' <<<"$main_entries"; then
    ok "main jar: dibs/Dibs.class"
  else
    miss "main jar: no dibs/Dibs.class"
  fi
  in_jar=$(grep $'^dibs/native/[^/]*/[^/]*\t' <<<"$main_entries" || true)
  diffs_in_jar=$(grep $'^dibs/native/[^/]*\.diff\t' <<<"$main_entries" || true)
  staged=()
  for lib in target/natives/*/libdibs.so target/natives/*/libdibs.dylib target/natives/*/dibs.dll; do
    [ -f "$lib" ] && staged+=("$lib")
  done
  if [ ${#staged[@]} -eq 0 ]; then
    note "target/natives holds no library (build them with scripts/build-natives.sh): nothing to compare the jar with"
  fi
  present=()
  declare -A lib_of=() # platform -> its library in target/natives
  for lib in "${staged[@]}"; do
    rel=${lib#target/natives/}
    p=${rel%%/*}
    lib_of[$p]=$lib
    entry="dibs/native/$rel"
    want=$(sha256sum "$lib" | cut -d' ' -f1)
    got=$(awk -F'\t' -v e="$entry" '$1 == e { print $2 }' <<<"$in_jar")
    got_diff=$(awk -F'\t' -v e="dibs/native/$p.diff" '$1 == e { print $2 }' <<<"$diffs_in_jar")
    if [ -n "$got" ] && [ -n "$got_diff" ]; then
      miss "main jar: $entry both whole and as dibs/native/$p.diff"
    elif [ "$got" = "$want" ]; then
      ok "main jar: $entry ($(wc -c <"$lib" | tr -d ' ') bytes, same as $lib)"
      present+=("$p")
    elif [ -n "$got" ]; then
      miss "main jar: $entry differs from $lib"
    elif [ -z "$got_diff" ]; then
      miss "main jar: no $entry, nor dibs/native/$p.diff (target/natives has it)"
    elif [ "$got_diff" = "$(sha256sum "target/natives/$p.diff" 2>/dev/null | cut -d' ' -f1)" ]; then
      ok "main jar: dibs/native/$p.diff (same as target/natives/$p.diff, which makes $lib)"
      present+=("$p")
    else
      miss "main jar: dibs/native/$p.diff differs from target/natives/$p.diff"
    fi
  done
  while IFS=$'\t' read -r entry _; do
    [ -n "$entry" ] || continue
    [ -f "target/natives/${entry#dibs/native/}" ] || note "main jar: $entry is not in target/natives (a stale build output?)"
  done <<<"$in_jar"$'\n'"$diffs_in_jar"
  absent=()
  for p in "${ALL_PLATFORMS[@]}"; do
    [[ " ${present[*]} " == *" $p "* ]] || absent+=("$p")
  done
  echo "   platforms in the jar: ${present[*]:-none}"
  if [ ${#absent[@]} -gt 0 ]; then
    if $require_all; then
      miss "main jar: no library for ${absent[*]}"
    else
      note "the jar has no library for ${absent[*]} (the release workflow assembles all ${#ALL_PLATFORMS[@]}; --all-platforms requires them)"
    fi
  fi
  # The jar per platform: the classes and its own library alone, whole, at most 2 MB, for each
  # platform the main jar carries (scripts/check-platform-jars.sh then locks with one of them alone).
  for p in "${present[@]}"; do
    jar="$base-$p.jar"
    [ -s "$jar" ] || continue # its own MISS above
    jar_entries=$(entries "$jar")
    libs=$(grep $'^dibs/native/[^/]*/[^/]*\t' <<<"$jar_entries" || true)
    lib=${lib_of[$p]}
    want=$(printf 'dibs/native/%s\t%s' "${lib#target/natives/}" "$(sha256sum "$lib" | cut -d' ' -f1)")
    size=$(wc -c <"$jar" | tr -d ' ')
    if [ "$libs" != "$want" ]; then
      miss "$p jar: its libraries are [${libs//$'\t'/ }], not the $p library of target/natives alone"
    elif grep -q $'^dibs/native/[^/]*\.diff\t' <<<"$jar_entries"; then
      miss "$p jar: it carries a diff"
    elif ! grep -q $'^dibs/Dibs\.class\t' <<<"$jar_entries"; then
      miss "$p jar: no dibs/Dibs.class"
    elif [ "$size" -gt $((2 * 1024 * 1024)) ]; then
      miss "$p jar: $size bytes, over 2 MB"
    else
      ok "$p jar: $size bytes, the classes and the $p library alone, the one the main jar carries"
    fi
  done
  echo "   the main jar: $(wc -c <"$base.jar" | tr -d ' ') bytes"
fi

echo
echo "== summary"
echo "   version $version, signed with throwaway key ${key: -16}, deployed to $REPO"
for n in "${notes[@]}"; do echo "   note: $n"; done
echo "   maven ${mvn_time} s, total $((SECONDS - start)) s"
if [ "$failures" -eq 0 ]; then
  echo "check-release: OK, the release artifacts meet Maven Central's rules"
else
  echo "check-release: $failures check(s) failed" >&2
  exit 1
fi
