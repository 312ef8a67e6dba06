package dibs

import dibs.kotlin.DibsOutcome
import dibs.kotlin.attemptSuspending
import dibs.testsupport.LeaseFaults
import dibs.testsupport.LeaseFaults.Fault
import dibs.testsupport.LeaseFaults.Kind
import dibs.testsupport.LeaseFaults.Point
import dibs.testsupport.RedisServer
import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger
import java.util.stream.Stream
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.TestInstance
import org.junit.jupiter.api.extension.RegisterExtension
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.Arguments
import org.junit.jupiter.params.provider.MethodSource

/**
 * The lease of a suspending call is released exactly once wherever the JVM fails between the
 * acquire and the release (issue 17): the points and checks of the library's LeaseFaultTest,
 * through attemptSuspending on Dispatchers.Default. Errors and exceptions only: an interrupt has no
 * caller to reach in a coroutine (it would stay on a pool thread), and cancellation has tests of
 * its own (SuspendingCancellationTest); the offload point is a virtual thread's, and the suspending
 * calls run on Dispatchers.IO. In package dibs, for the lease table and the points.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SuspendingLeaseFaultTest {
    companion object {
        @JvmField @RegisterExtension val redis: RedisServer = RedisServer.perTestClass()
    }

    private var failingLogger: AutoCloseable? = null
    private val cases = AtomicInteger()

    @AfterEach
    fun removeHooks() {
        FaultInjection.hook = null
        failingLogger?.close()
    }

    fun cases(): Stream<Arguments> =
        Point.values()
            .filter { it != Point.OFFLOAD_SUBMIT }
            .flatMap { p -> listOf(Kind.ERROR, Kind.EXCEPTION).map { k -> Arguments.of(p, k) } }
            .stream()

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    fun theLeaseOfASuspendingCallIsReleasedOnceWhereverTheJvmFails(point: Point, kind: Kind): Unit =
        runBlocking {
            val n = cases.incrementAndGet()
            val name = "suspend-fault-$point-$kind-p${ProcessHandle.current().pid()}-$n"
            val fault = Fault(point, kind)
            failingLogger = LeaseFaults.failingLogger(fault)
            FaultInjection.hook = java.util.function.Consumer { p -> fault.at(p.name) }
            val listener = LeaseFaults.failingListener(DibsListener::class.java, fault)
            val atMost =
                if (fault.expires()) Duration.ofMillis(200) else Duration.ofMillis(10_000L + n)
            val leasesBefore = NativeLib.heldLeases()
            val extendersBefore = LeaseFaults.threadIdsNamed("dibs-keep-alive")
            var ran = false
            val outcome =
                Dibs.client(
                        DibsOptions.builder()
                            .uri(redis.uri())
                            .keepAlive(!fault.expires())
                            .listener(listener)
                            .build()
                    )
                    .use { client ->
                        withContext(Dispatchers.Default) {
                            runCatching {
                                client.attemptSuspending(name, atMost) {
                                    ran = true
                                    fault.at(Point.TASK)
                                    if (fault.expires()) LeaseFaults.pause(350)
                                }
                            }
                        }
                    }
            FaultInjection.hook = null
            assertTrue(fault.fired(), "$fault: the point was reached")
            if (fault.failsTheCall()) {
                assertSame(
                    fault.thrown(),
                    outcome.exceptionOrNull(),
                    "$fault: the caller gets the very object thrown",
                )
                assertEquals(
                    point == Point.TASK,
                    ran,
                    "$fault: the block ran only if the lease was made",
                )
            } else {
                outcome.exceptionOrNull()?.let {
                    throw AssertionError("$fault: the call failed", it)
                }
                assertTrue(outcome.getOrNull() is DibsOutcome.Ran<*>, "$fault: the block ran")
            }
            assertEquals(
                "0",
                redis.command("EXISTS", RedisServer.lockKey(name)),
                "$fault: the lock is released",
            )
            assertEquals(leasesBefore, NativeLib.heldLeases(), "$fault: no lease is left in Rust")
            // Threads of this call's keep-alive, none left (one of an earlier test's dropped lease
            // may end meanwhile, by the cleaner's release).
            assertEquals(
                emptySet<String>(),
                LeaseFaults.settledNewThreadsNamed("dibs-keep-alive", extendersBefore),
                "$fault: keep-alive stopped",
            )
        }
}
