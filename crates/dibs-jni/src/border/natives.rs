//! The native methods of `dibs.NativeLib`, declared once: their names, parameters and Javadoc.
//! `java/src/main/java/dibs/NativeLib.java` is generated from these declarations (a unit test of
//! the quick lane fails when it differs; `DIBS_BORDER_WRITE=1 cargo test -p dibs-jni --lib border`
//! writes it), and each declaration names the Rust function that implements it, whose signature
//! the compiler checks against the declared Java types: a parameter added on one side only does
//! not build.
//!
//! A type is `long`, `int`, `boolean`, `String`, `void`, `[String]` or `[long]` (arrays), or the
//! name of a border record (`Border.<name>` in Java, a `JObject` in Rust).

/// One native method, for the Java generator.
#[cfg_attr(not(test), allow(dead_code))] // read by the generator, a test
pub(crate) struct Native {
    pub(crate) name: &'static str,
    /// Each parameter's name and Java type.
    pub(crate) params: &'static [(&'static str, &'static str)],
    pub(crate) returns: &'static str,
    pub(crate) doc: &'static [&'static str],
    /// The Rust function, as written (its name checked against the method's by a test).
    pub(crate) function: &'static str,
}

/// A declared type as Java writes it.
macro_rules! java_type {
    (long) => {
        "long"
    };
    (int) => {
        "int"
    };
    (boolean) => {
        "boolean"
    };
    (String) => {
        "String"
    };
    (void) => {
        "void"
    };
    ([String]) => {
        "String[]"
    };
    ([long]) => {
        "long[]"
    };
    ($record:ident) => {
        concat!("Border.", stringify!($record))
    };
}

/// A declared parameter type as the JNI function takes it.
macro_rules! jni_param {
    ($l:lifetime, long) => { jni::sys::jlong };
    ($l:lifetime, int) => { jni::sys::jint };
    ($l:lifetime, boolean) => { jni::sys::jboolean };
    ($l:lifetime, String) => { jni::objects::JString<$l> };
    ($l:lifetime, [String]) => { jni::objects::JObjectArray<$l> };
    ($l:lifetime, $record:ident) => { jni::objects::JObject<$l> };
}

/// A declared return type as the JNI function returns it.
macro_rules! jni_return {
    (void) => {
        ()
    };
    (long) => {
        jni::sys::jlong
    };
    (int) => {
        jni::sys::jint
    };
    (boolean) => {
        jni::sys::jboolean
    };
    (String) => {
        jni::sys::jstring
    };
    ([long]) => {
        jni::sys::jlongArray
    };
    ($record:ident) => {
        jni::sys::jobject
    };
}

/// The declarations: the generator's list, and for each a check that its Rust function takes and
/// returns what the declaration says.
macro_rules! natives {
    ($($(#[doc = $doc:literal])* fn $name:ident($($param:ident: $ty:tt),*) -> $ret:tt = $module:ident::$function:ident;)*) => {
        #[cfg_attr(not(test), allow(dead_code))] // read by the generator, a test
        pub(crate) const NATIVES: &[Native] = &[$(Native {
            name: stringify!($name),
            params: &[$((stringify!($param), java_type!($ty))),*],
            returns: java_type!($ret),
            doc: &[$($doc),*],
            function: stringify!($function),
        }),*];

        $(
            const _: for<'l> extern "system" fn(
                jni::JNIEnv<'l>,
                jni::objects::JClass<'l>
                $(, jni_param!('l, $ty))*
            ) -> jni_return!($ret) = crate::entry::$module::$function;
        )*
    };
}

natives! {
    /// The fingerprint of the JNI border this library was built with: a hash of the generated
    /// {@code Border.java} and {@code NativeLib.java}. This class's initializer refuses a library
    /// whose fingerprint differs (another build of dibs: its methods may take other arguments).
    fn fingerprint() -> String = conn::Java_dibs_NativeLib_fingerprint;

    /// Parses a URI conn spec; returns an opaque handle (&gt; 0). Shared: the process-wide pooled
    /// client of that spec, which equal specs share. Owned: a client with a pool of its own, for a
    /// {@link DibsClient}, dropped by {@link #close}. No network I/O.
    ///
    /// @throws DibsArgumentException on a bad spec, naming the key at fault (the message never
    ///     shows a password)
    fn connectUri(uri: String, owned: boolean) -> long = conn::Java_dibs_NativeLib_connectUri;

    /// Same as {@link #connectUri}, for a {@link java.util.Map} conn flattened by
    /// {@link ConnCache#flatten} into {@code key, tag, value} triples.
    ///
    /// @throws DibsArgumentException on a bad spec (unknown key, wrong type, bad value)
    fn connectMap(tokens: [String], owned: boolean) -> long = conn::Java_dibs_NativeLib_connectMap;

    /// {@link ConnCache#describe} of a URI conn.
    fn describeUri(uri: String) -> String = conn::Java_dibs_NativeLib_describeUri;

    /// {@link ConnCache#describe} of a Map conn, flattened.
    fn describeMap(tokens: [String]) -> String = conn::Java_dibs_NativeLib_describeMap;

    /// Drops the pool of an owned handle. Closing twice is harmless.
    fn close(handle: long) -> void = conn::Java_dibs_NativeLib_close;

    /// Validates the arguments, then {@code SET key token NX PX atMost}, and says how it went as
    /// {@link #release} does. With keep-alive in the conn, a Rust thread (which never calls the
    /// JVM) extends the lock until {@link #release}.
    ///
    /// @param tick null, or a tick of the job {@code lockName}: the lock {@code <lockName>@<tick>},
    ///     kept for all of atMost from its acquisition as the tick's done marker ({@code atLeast}
    ///     is then atMost)
    /// @param unitMs 1000 when {@code atMost}/{@code atLeast} are seconds, 1 when milliseconds
    /// @param tellJob whether {@code into} should say the lock's job too (a listener hears the
    ///     call: the job the core computed, so that Java never asks for it)
    /// @param into receives how it ended ({@link Border.AcquireOutcome}: won, taken, or
    ///     unconfirmed: durable acquire won the lock, could not confirm it on the replicas in time,
    ///     and gave it back, so the task must not run), the lease's id and fencing token when won,
    ///     and the acquire's warning for the log (unconfirmed, or keep-alive's schedule cannot hold
    ///     for this atMost), or null
    /// @throws DibsArgumentException on an invalid name, tick or duration, before any I/O
    /// @throws DibsException (a subclass where one fits) when the lock could not be tried
    fn acquire(handle: long, lockName: String, tick: String, atMost: long, atLeast: long, unitMs: long, tellJob: boolean, into: Acquired) -> void = lease::Java_dibs_NativeLib_acquire;

    /// {@link #acquire} of the lock of a tick of the job {@code job} that may not have run: won
    /// only when its lock is free and the job's history proves that no run of it was recorded,
    /// both in one script, so that no two instances run one tick (atLeast is atMost).
    ///
    /// @param atMost how long the lock is held, and the tick marked done
    /// @param unitMs 1000 when {@code atMost} is seconds, 1 when milliseconds
    /// @param dueMs when the tick was due, Unix ms: the history proves a miss only if it reaches
    ///     back to it
    /// @param catchUp whether the run is a catch-up's (a tick run after its time), for the history
    /// @param into as {@link #acquire}'s, where the history's answers are outcomes too: the tick
    ///     ran, whether it ran is unknown (the warning says so), or it is beyond catch-up's reach
    /// @throws DibsArgumentException on an invalid name, tick or due time, or a conn without the
    ///     history, or a Cluster's, before any I/O
    /// @throws DibsException (a subclass where one fits) when the lock could not be tried
    fn acquireUnrun(handle: long, job: String, tick: String, atMost: long, unitMs: long, dueMs: long, catchUp: boolean, tellJob: boolean, into: Acquired) -> void = lease::Java_dibs_NativeLib_acquireUnrun;

    /// Whether the tick {@code tick} of the job {@code job}, due at {@code dueMs} (Unix ms), ran,
    /// by its lock and its job's history: a {@link Border.TickState} code. Changes nothing.
    fn tickState(handle: long, job: String, tick: String, dueMs: long) -> int = lease::Java_dibs_NativeLib_tickState;

    /// Stops keep-alive and releases a lease with the token-checked script, then says how the
    /// call ended. A lease is released once: its id is then unknown.
    ///
    /// @param task how the task ended, for the run history: a {@link Border.Task} code
    /// @param into receives how the call ended ({@link Border.Released})
    /// @throws IllegalStateException when the lease was released already
    fn release(lease: long, task: int, into: Released) -> void = lease::Java_dibs_NativeLib_release;

    /// If the lease's lock is still ours, sets its expiry to {@code atMostMs} from now and counts
    /// {@code atLeastMs} from now. The lease stays held either way.
    ///
    /// @return true if extended; false if the lock was no longer ours
    /// @throws DibsArgumentException on invalid durations, before any I/O
    /// @throws IllegalStateException when the lease was released
    /// @throws DibsException when Redis could not be reached
    fn extend(lease: long, atMostMs: long, atLeastMs: long) -> boolean = lease::Java_dibs_NativeLib_extend;

    /// The lease's fencing token: greater than that of every earlier holder of the lock (the
    /// server's clock in microseconds, read in the acquire's script); 0 when the server's ACL
    /// refuses {@code TIME}. No I/O.
    ///
    /// @throws IllegalStateException when the lease was released
    fn fencingToken(lease: long) -> long = lease::Java_dibs_NativeLib_fencingToken;

    /// Whether keep-alive found the lease's lock taken, or could not extend it in time. No I/O.
    ///
    /// @throws IllegalStateException when the lease was released
    fn isLost(lease: long) -> boolean = lease::Java_dibs_NativeLib_isLost;

    /// Has the lease's id returned by {@link #awaitLost} once keep-alive finds its lock lost (at
    /// once if it is lost already). No I/O.
    ///
    /// @return false when the lease has no keep-alive: nothing watches its lock
    /// @throws IllegalStateException when the lease was released
    fn watchLost(lease: long) -> boolean = lease::Java_dibs_NativeLib_watchLost;

    /// The watched leases found lost since the last call, waiting up to {@code timeoutMs} for one;
    /// empty when none came. Blocks: for {@link LostWatch}'s thread alone.
    fn awaitLost(timeoutMs: long) -> [long] = lease::Java_dibs_NativeLib_awaitLost;

    /// How many milliseconds longer the holder may rely on the lease's lock: atMost from when the
    /// last command that set its expiry was sent, less 1% of atMost + 2 ms; 0 once lost. No I/O.
    ///
    /// @throws IllegalStateException when the lease was released
    fn safeForMs(lease: long) -> long = lease::Java_dibs_NativeLib_safeForMs;

    /// How many leases Rust holds for Java: acquired and not yet released. No I/O. A diagnostic:
    /// the tests check it is back to 0 after every kind of failure.
    fn heldLeases() -> long = lease::Java_dibs_NativeLib_heldLeases;

    /// Reads who holds a lock, in one round trip; never changes the lock.
    ///
    /// @throws DibsArgumentException on an invalid name, before any I/O
    /// @throws DibsException when Redis could not be read
    fn inspect(handle: long, lockName: String) -> Inspected = fleet::Java_dibs_NativeLib_inspect;

    /// The last {@code limit} recorded runs of the job or lock {@code name}, and what they prove.
    fn history(handle: long, name: String, limit: int) -> History = fleet::Java_dibs_NativeLib_history;

    /// The jobs with a recorded run, the most recent first, scanned for at most {@code budgetMs}
    /// (in {@link Border.Listing#jobs}).
    fn jobs(handle: long, limit: int, budgetMs: long) -> Listing = fleet::Java_dibs_NativeLib_jobs;

    /// The held locks whose names match the glob {@code pattern}, scanned for at most
    /// {@code budgetMs} (in {@link Border.Listing#locks}).
    fn locks(handle: long, pattern: String, limit: int, budgetMs: long) -> Listing = fleet::Java_dibs_NativeLib_locks;

    /// The locks of the job {@code job} that a run holds now (its own name, its ticks', the names
    /// whose job it is, each with a fresh token), scanned for at most {@code budgetMs}, as
    /// {@link #locks} lists them.
    fn running(handle: long, job: String, budgetMs: long) -> Listing = fleet::Java_dibs_NativeLib_running;

    /// The core's judge of the job {@code job} (see {@link DibsCheck}): a window, or a period with
    /// its grace, or neither; durations in ms, -1 for none, {@link Long#MIN_VALUE} for a negative.
    ///
    /// @throws DibsArgumentException on a bad name or duration, before any I/O
    /// @throws DibsException when Redis could not be read
    fn check(handle: long, job: String, withinMs: long, periodMs: long, graceMs: long, expectedSinceMs: long, minDurationMs: long, maxDurationMs: long, graceAfterStartMs: long, budgetMs: long) -> Judged = check::Java_dibs_NativeLib_check;

    /// Checks a listing's scan budget, without I/O.
    ///
    /// @throws DibsArgumentException unless more than 0 and at most the core's maximum
    fn validateBudget(budgetMs: long) -> void = fleet::Java_dibs_NativeLib_validateBudget;

    /// The lock {@code lockName} with its token; null when free.
    fn heldLock(handle: long, lockName: String) -> Held = fleet::Java_dibs_NativeLib_heldLock;

    /// Deletes {@code lockName} if it holds {@code token}: a {@link Border.ForcedRelease} code.
    fn forceRelease(handle: long, lockName: String, token: String, by: String) -> int = fleet::Java_dibs_NativeLib_forceRelease;

    /// The job a lock name belongs to (the one rule of the history, the meters, the expectations):
    /// for a name whose acquire did not say it ({@link JobNames}).
    fn jobOf(lockName: String) -> String = fleet::Java_dibs_NativeLib_jobOf;

    /// Whether the handle's releases record their runs in the history (the conn's {@code history}).
    fn keepsHistory(handle: long) -> boolean = fleet::Java_dibs_NativeLib_keepsHistory;
}

/// `NativeLib.java`, generated from [`NATIVES`], laid out as the house's Java formatter lays it
/// out (so that its check and this one agree).
#[cfg(test)]
pub(crate) mod java {
    use super::{Native, NATIVES};

    pub(crate) const PATH: &str = "../../java/src/main/java/dibs/NativeLib.java";
    const WIDTH: usize = 120;

    /// Each declaration names its own method's function.
    pub(crate) fn check_functions() {
        for native in NATIVES {
            assert_eq!(
                native.function,
                format!("Java_dibs_NativeLib_{}", native.name),
                "a declaration names another method's function"
            );
        }
    }

    pub(crate) fn source(natives: &[Native]) -> String {
        let mut out = String::from(
            "// Generated from crates/dibs-jni/src/border/natives.rs: do not edit. A unit test of dibs-jni (in the quick\n\
             // lane) fails when this file is not what those declarations generate;\n\
             // DIBS_BORDER_WRITE=1 cargo test -p dibs-jni --lib border writes it.\n\
             package dibs;\n\
             \n\
             import dibs.loader.NativeLoader;\n\
             \n\
             /**\n\
             \x20* The JNI boundary: the only methods of dibs implemented in Rust ({@code Java_dibs_NativeLib_*}),\n\
             \x20* declared once with the Rust functions that implement them, whose signatures the compiler checks\n\
             \x20* against these ({@code crates/dibs-jni/src/border/natives.rs}); what crosses besides the arguments\n\
             \x20* ({@link Border}'s records and codes) is declared beside them. Loading the class loads the native\n\
             \x20* library (see {@link NativeLoader}).\n\
             \x20*/\n\
             final class NativeLib {\n\
             \x20   static {\n\
             \x20       NativeLoader.load();\n\
             \x20       String built;\n\
             \x20       try {\n\
             \x20           built = fingerprint();\n\
             \x20       } catch (UnsatisfiedLinkError older) {\n\
             \x20           built = \"none\";\n\
             \x20       }\n\
             \x20       if (!Border.FINGERPRINT.equals(built)) {\n\
             \x20           throw new UnsatisfiedLinkError(\"the dibs native library loaded is of another build than this jar\"\n\
             \x20                   + \" (the JNI border's fingerprint \" + built + \", this jar's \" + Border.FINGERPRINT\n\
             \x20                   + \"): use the library of this jar, or build both from one source\");\n\
             \x20       }\n\
             \x20   }\n\
             \n\
             \x20   private NativeLib() {}\n",
        );
        for native in natives {
            out.push('\n');
            javadoc(&mut out, native.doc);
            let params: Vec<String> = native
                .params
                .iter()
                .map(|(name, ty)| format!("{ty} {name}"))
                .collect();
            let head = format!("    static native {} {}(", native.returns, native.name);
            let one = format!("{head}{});", params.join(", "));
            let wrapped = format!("            {});", params.join(", "));
            if one.len() <= WIDTH {
                out.push_str(&one);
            } else if wrapped.len() <= WIDTH {
                out.push_str(&format!("{head}\n{wrapped}"));
            } else {
                out.push_str(&format!(
                    "{head}\n            {});",
                    params.join(",\n            ")
                ));
            }
            out.push('\n');
        }
        out.push_str("}\n");
        out
    }

    fn javadoc(out: &mut String, doc: &[&str]) {
        if doc.is_empty() {
            return;
        }
        let lines: Vec<&str> = doc
            .iter()
            .map(|l| l.strip_prefix(' ').unwrap_or(l))
            .collect();
        let one = format!("    /** {} */", lines[0]);
        if lines.len() == 1 && one.len() <= WIDTH {
            out.push_str(&one);
            out.push('\n');
            return;
        }
        out.push_str("    /**\n");
        for line in lines {
            if line.is_empty() {
                out.push_str("     *\n");
            } else {
                out.push_str(&format!("     * {line}\n"));
            }
        }
        out.push_str("     */\n");
    }
}
