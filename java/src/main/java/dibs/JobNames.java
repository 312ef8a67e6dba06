package dibs;

/**
 * The job of a lock name, as Rust's one rule says ({@code dibs::job_of}). The job of the lock this
 * thread acquired last arrives with its acquire (where a listener hears the call), so that the
 * listener's meters and expectations, asking during the call, never cross to Rust for it; any
 * other name is asked of Rust. The rule is never copied here: a name remembered is the name
 * Rust was given, and its job the one Rust computed.
 */
final class JobNames {
    /** This thread's last acquired lock name and its job, as the acquire told them. */
    private static final ThreadLocal<String[]> TOLD = new ThreadLocal<>();
    /** How many times Rust was asked (a test's count: the calls a listener hears never ask). */
    static final java.util.concurrent.atomic.LongAdder ASKED = new java.util.concurrent.atomic.LongAdder();

    private JobNames() {}

    /** Remembers the job of {@code lockName} that its acquire told ({@code job} null: not told). */
    static void told(String lockName, String job) {
        if (job != null) {
            TOLD.set(new String[] {lockName, job});
        }
    }

    static String of(String lockName) {
        String[] told = TOLD.get();
        if (told != null && told[0].equals(lockName)) {
            return told[1];
        }
        ASKED.increment();
        return NativeLib.jobOf(lockName);
    }
}
