//! `java/src/main/java/dibs/Border.java`, generated from the border's declarations.

use super::declare::{camel_case, Codes, Record};

/// One declaration of the border, for the generator.
pub(crate) enum Declaration {
    Codes(&'static Codes),
    Record(&'static Record),
    Limit(&'static Limit),
}

/// A number the core owns that Java states too (a bound Java checks before it asks): generated as
/// a `static final long` of `Border`.
pub(crate) struct Limit {
    /// The Java name (upper snake case).
    pub(crate) name: &'static str,
    pub(crate) value: i64,
    pub(crate) doc: &'static [&'static str],
}

/// Where the generated file lives, from this crate's directory.
pub(crate) const PATH: &str = "../../java/src/main/java/dibs/Border.java";

/// The whole of `Border.java` for these declarations, with the border's `fingerprint`.
pub(crate) fn source(declarations: &[Declaration], fingerprint: &str) -> String {
    let mut out = String::from(
        "// Generated from crates/dibs-jni/src/border/mod.rs: do not edit. A unit test of dibs-jni (in the quick\n\
         // lane) fails when this file is not what those declarations generate;\n\
         // DIBS_BORDER_WRITE=1 cargo test -p dibs-jni --lib border writes it.\n\
         package dibs;\n\
         \n\
         /**\n\
         \x20* What crosses the JNI border besides the native methods' own arguments, declared once in Rust: records\n\
         \x20* that Java makes and Rust fills by field name, and lists of codes whose code is the constant's ordinal.\n\
         \x20*/\n\
         final class Border {\n\
         \x20   private Border() {}\n",
    );
    for declaration in declarations {
        out.push('\n');
        match declaration {
            Declaration::Codes(codes) => codes_source(&mut out, codes),
            Declaration::Record(record) => record_source(&mut out, record),
            Declaration::Limit(limit) => {
                javadoc(&mut out, 1, limit.doc);
                out.push_str(&format!(
                    "    static final long {} = {}L;\n",
                    limit.name, limit.value
                ));
            }
        }
    }
    out.push_str(&format!(
        "\n    /** The fingerprint of the border: {{@link NativeLib}} refuses a native library of another. */\n\
         \x20   static final String FINGERPRINT = \"{fingerprint}\";\n}}\n"
    ));
    out
}

/// The fingerprint of a border: FNV-1a (64 bits) of its generated Java, in hex.
fn fingerprint(sources: &[&str]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in sources.iter().flat_map(|s| s.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// `fingerprint.rs`: the fingerprint, for the library's own answer.
fn fingerprint_source(fingerprint: &str) -> String {
    format!(
        "// Generated with Border.java and NativeLib.java (see `border::java`): do not edit.\n\
         /// The fingerprint of the JNI border this library is built with.\n\
         pub(crate) const FINGERPRINT: &str = \"{fingerprint}\";\n"
    )
}

fn codes_source(out: &mut String, codes: &Codes) {
    javadoc(out, 1, codes.doc);
    out.push_str(&format!("    enum {} {{\n", codes.name));
    for (i, (constant, doc)) in codes.constants.iter().enumerate() {
        javadoc(out, 2, doc);
        let end = if i + 1 == codes.constants.len() {
            ";"
        } else {
            ","
        };
        out.push_str(&format!("        {}{end}\n", upper_snake_case(constant)));
    }
    let name = codes.name;
    out.push_str(&format!(
        "\n        private static final {name}[] BY_CODE = values();\n\
         \n\
         \x20       /** The constant of a code Rust sent. */\n\
         \x20       static {name} of(int code) {{\n\
         \x20           return BY_CODE[code];\n\
         \x20       }}\n\
         \n\
         \x20       /** The code Rust reads. */\n\
         \x20       int code() {{\n\
         \x20           return ordinal();\n\
         \x20       }}\n\
         \x20   }}\n"
    ));
}

fn record_source(out: &mut String, record: &Record) {
    javadoc(out, 1, record.doc);
    out.push_str(&format!("    static final class {} {{\n", record.name));
    for (i, field) in record.fields.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        javadoc(out, 2, field.doc);
        out.push_str(&format!(
            "        {} {};\n",
            field.ty.java,
            camel_case(field.name)
        ));
    }
    for field in record.fields {
        if let Some(codes) = field.ty.codes {
            let name = camel_case(field.name);
            out.push('\n');
            javadoc(out, 2, field.doc);
            out.push_str(&format!(
                "        {codes} {name}() {{\n            return {codes}.of({name});\n        }}\n"
            ));
        }
    }
    out.push_str("    }\n");
}

/// A Javadoc comment of Rust doc lines, at `depth` levels of 4 spaces.
fn javadoc(out: &mut String, depth: usize, doc: &[&str]) {
    let indent = "    ".repeat(depth);
    let lines: Vec<&str> = doc.iter().map(|line| line.trim()).collect();
    let one = format!("{indent}/** {} */", lines.join(" "));
    if lines.len() == 1 && one.len() <= 120 {
        out.push_str(&one);
        out.push('\n');
        return;
    }
    out.push_str(&format!("{indent}/**\n"));
    for line in lines {
        out.push_str(&format!("{indent} * {line}\n"));
    }
    out.push_str(&format!("{indent} */\n"));
}

/// `KeptForAtLeast` -> `KEPT_FOR_AT_LEAST`: a constant's Java name.
fn upper_snake_case(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The quick lane's check of the border: the Java side (`Border.java`, `NativeLib.java`) is
    /// what the declarations generate, and the library's fingerprint is theirs.
    #[test]
    fn border_java_is_what_the_declarations_generate() {
        use crate::border::natives::java as natives;
        natives::check_functions();
        let native_lib = natives::source(crate::border::natives::NATIVES);
        let print = fingerprint(&[&source(crate::border::ALL, ""), &native_lib]);
        let files = [
            (PATH, source(crate::border::ALL, &print)),
            (natives::PATH, native_lib),
            ("src/border/fingerprint.rs", fingerprint_source(&print)),
        ];
        for (file, generated) in files {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
            if std::env::var_os("DIBS_BORDER_WRITE").is_some() {
                std::fs::write(&path, &generated).unwrap();
                continue;
            }
            let found = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                found == generated,
                "{} is not what crates/dibs-jni/src/border declares: the two sides of the JNI \
                 border disagree. Write it with DIBS_BORDER_WRITE=1 cargo test -p dibs-jni --lib \
                 border, then build both sides.",
                path.display()
            );
        }
    }

    #[test]
    fn names() {
        assert_eq!(upper_snake_case("KeptForAtLeast"), "KEPT_FOR_AT_LEAST");
        assert_eq!(camel_case("owned_to_the_end"), "ownedToTheEnd");
    }
}
