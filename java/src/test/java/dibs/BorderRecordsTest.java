package dibs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.ref.WeakReference;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 45's border, as its attack found it: records that Rust makes by the thousand, and an
 * application redeployed in a class loader of its own.
 */
@Timeout(120)
class BorderRecordsTest extends RedisTestBase {
    /**
     * Thousands of held locks and a job's whole history come back whole. Each record's texts are
     * let go of as they are set: this fork runs with -Xcheck:jni, and a JNI local reference kept
     * per text ("JNI local refs: 9999, exceeds capacity") is what scripts/check-jni-warnings.sh
     * fails the test command on.
     */
    @Test
    void thousandsOfLocksAndAWholeHistoryComeBackWhole() {
        String prefix = "border-" + ProcessHandle.current().pid() + "-";
        try (DibsClient client = Dibs.client(local().build())) {
            List<DibsLease> held = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) {
                held.add(client.tryLock(prefix + i, Duration.ofMinutes(1), Duration.ZERO)
                        .orElseThrow());
            }
            DibsListing<HeldLock> locks = client.locks(prefix + "*", 10_000);
            assertTrue(locks.complete(), locks.partialNote());
            assertEquals(2_000, locks.size());
            for (HeldLock lock : locks) {
                assertTrue(
                        lock.running()
                                && lock.token().isPresent()
                                && lock.host().isPresent(),
                        lock.toString());
            }
            held.forEach(DibsLease::release);

            String job = prefix + "job";
            for (int i = 0; i < 300; i++) {
                client.execute(job, Duration.ofSeconds(10), Duration.ZERO, () -> {});
            }
            DibsHistory history = client.history(job, 10_000);
            assertTrue(history.size() > 16, "more runs than JNI's guaranteed local references: " + history.size());
            for (DibsRun run : history) {
                assertEquals(job, run.lockName());
                assertTrue(run.succeeded(), run.toString());
            }
        }
    }

    /**
     * An application redeployed in a class loader of its own (an application server, a
     * development restart) leaves nothing behind: once it let go of dibs, its class loader is
     * collected. Before, a reference the border kept to a record's class held it, and the copy of
     * the native library it had loaded, forever.
     */
    @Test
    void aRedeployedApplicationsClassLoaderIsCollected() throws Exception {
        // A library named by path is one file, which a JVM loads in one class loader only.
        assumeTrue(System.getProperty("dibs.native.path") == null, "the library is named by -Ddibs.native.path");
        WeakReference<ClassLoader> loader = deployAndUndeploy();
        for (int i = 0; i < 100 && loader.get() != null; i++) {
            System.gc();
        }
        assertTrue(loader.get() == null, "the class loader of an undeployed application is still reachable");
    }

    /** Runs a call and reads a history through dibs in a class loader of its own, then drops it. */
    private static WeakReference<ClassLoader> deployAndUndeploy() throws Exception {
        URL classes = Dibs.class.getProtectionDomain().getCodeSource().getLocation();
        try (URLClassLoader app = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader())) {
            Class<?> dibs = app.loadClass("dibs.Dibs");
            assertTrue(dibs.getClassLoader() == app, "dibs loaded by the application's own loader");
            Object client = dibs.getMethod("client", Object.class).invoke(null, "redis://127.0.0.1:" + redis.port());
            Method execute =
                    client.getClass().getMethod("execute", String.class, long.class, long.class, Runnable.class);
            String job = "redeployed-" + ProcessHandle.current().pid();
            assertEquals(true, execute.invoke(client, job, 30L, 0L, (Runnable) () -> {}));
            Object history = client.getClass()
                    .getMethod("history", String.class, int.class)
                    .invoke(client, job, 5);
            assertEquals(1, ((List<?>) history).size());
            ((AutoCloseable) client).close();
            return new WeakReference<>(app);
        }
    }
}
