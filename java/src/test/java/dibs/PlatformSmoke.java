package dibs;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A smoke test of one real lock cycle with the assembled jar, run by the release workflow on
 * every platform the jar carries a native library for (.github/workflows/release.yml). Not a
 * JUnit test: it runs with nothing but the jar on the class path.
 *
 * <pre>{@code
 * javac -cp dibs.jar -d smoke PlatformSmoke.java
 * java -cp dibs.jar:smoke dibs.PlatformSmoke redis://127.0.0.1:6379
 * }</pre>
 *
 * Prints one line per check and a closing "N passed, N failed" line; exits 1 on any failure,
 * 2 on bad usage. Lock names carry a random suffix, so runs never see each other's keys; the
 * keys it leaves expire after 30 s.
 */
public final class PlatformSmoke {
    private static int passed;
    private static int failed;

    private interface Check {
        String run() throws Exception; // a detail for the PASS line; throws or fails() to fail
    }

    private static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message);
        }
    }

    private PlatformSmoke() {}

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: java -cp dibs.jar:. dibs.PlatformSmoke redis://host:port");
            System.exit(2);
        }
        String uri = args[0];
        // Not UUID.randomUUID(): names only need to differ, and seeding SecureRandom crashes
        // the JVM under wine (scripts/wine-smoke.sh), where this program runs too.
        String run = "r" + Integer.toHexString(ThreadLocalRandom.current().nextInt()); // never all digits: a tick
        System.out.println("dibs smoke on " + System.getProperty("os.name") + " " + System.getProperty("os.arch")
                + ", Java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor")
                + "), redis " + uri + ", run " + run);

        check("the library comes from the jar (dibs.native.path is not set)", () -> {
            String override = System.getProperty("dibs.native.path");
            if (override != null) {
                throw new Failure("dibs.native.path=" + override + " bypasses the bundled library");
            }
            return "";
        });

        check("execute runs the task once", () -> {
            AtomicInteger runs = new AtomicInteger();
            boolean ran = Dibs.execute(uri, "smoke-once-" + run, 30, 0, runs::incrementAndGet);
            expect(ran, "execute returned false");
            expect(runs.get() == 1, "the task ran " + runs.get() + " times");
            return "returned true, task ran 1 time";
        });

        check("a second execute on a held name is skipped", () -> {
            String name = "smoke-held-" + run;
            AtomicInteger inner = new AtomicInteger();
            boolean[] innerRan = new boolean[1];
            boolean outer = Dibs.execute(
                    uri, name, 30, 0, () -> innerRan[0] = Dibs.execute(uri, name, 30, 0, inner::incrementAndGet));
            expect(outer, "the first execute returned false");
            expect(!innerRan[0], "the second execute returned true while the lock was held");
            expect(inner.get() == 0, "the skipped task ran " + inner.get() + " times");
            return "outer true, inner false, inner task not run";
        });

        check("executeWithResult returns the task's value", () -> {
            Optional<String> value = Dibs.executeWithResult(uri, "smoke-result-" + run, 30, 0, () -> "value-" + run);
            expect(value.equals(Optional.of("value-" + run)), "got " + value);
            return "got " + value.get();
        });

        check("a task's exception reaches the caller as the same object", () -> {
            RuntimeException thrown = new IllegalStateException("smoke " + run);
            try {
                Dibs.execute(uri, "smoke-throw-" + run, 30, 0, () -> {
                    throw thrown;
                });
            } catch (RuntimeException caught) {
                expect(caught == thrown, "caught another exception: " + caught);
                LockInfo after = Dibs.inspect(uri, "smoke-throw-" + run);
                expect(!after.held(), "the lock is still held after the task threw: " + after);
                return "same object, lock released";
            }
            throw new Failure("execute returned normally");
        });

        check("atLeast keeps the key after a quick task (inspect shows it held)", () -> {
            String name = "smoke-atleast-" + run;
            expect(
                    Dibs.execute(uri, name, Duration.ofSeconds(30), Duration.ofSeconds(20), () -> {}),
                    "execute returned false");
            LockInfo info = Dibs.inspect(uri, name);
            expect(info.held(), "inspect says the lock is free: " + info);
            Duration left = info.remaining().orElse(Duration.ZERO);
            expect(
                    left.compareTo(Duration.ZERO) > 0 && left.compareTo(Duration.ofSeconds(20)) <= 0,
                    "remaining " + left + " is not within (0, 20 s]");
            AtomicInteger again = new AtomicInteger();
            expect(
                    !Dibs.execute(uri, name, 30, 0, again::incrementAndGet) && again.get() == 0,
                    "an execute during atLeast was not skipped");
            return info.toString();
        });

        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed == 0 ? 0 : 1);
    }

    private static void check(String what, Check check) {
        try {
            String detail = check.run();
            passed++;
            System.out.println("PASS  " + what + (detail.isEmpty() ? "" : ": " + detail));
        } catch (Throwable t) { // UnsatisfiedLinkError and friends count as failures too
            failed++;
            System.out.println("FAIL  " + what + ": " + t);
            if (!(t instanceof Failure)) {
                t.printStackTrace(System.out);
            }
        }
    }

    private static void expect(boolean ok, String message) throws Failure {
        if (!ok) {
            throw new Failure(message);
        }
    }
}
