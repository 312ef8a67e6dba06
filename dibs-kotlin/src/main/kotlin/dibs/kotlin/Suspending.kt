@file:JvmName("DibsSuspending")

package dibs.kotlin

import dibs.DibsClient
import dibs.DibsLease
import java.time.Duration
import kotlin.time.toJavaDuration
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CopyableThrowable
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.ensureActive
import kotlinx.coroutines.withContext

/**
 * What a suspending block under a dibs lock can ask while it runs: whether the lock is known lost
 * (keep-alive found it taken, or could not extend it in time). Check it between steps of work that
 * must not go on without the lock.
 */
public class DibsLockScope internal constructor(private val lease: DibsLease) {
    /** The lock's name. */
    public val lockName: String
        get() = lease.lockName()

    /** True if the lock is known lost (with keep-alive); always false without it. No I/O. */
    public fun isLost(): Boolean = lease.isLost

    /**
     * The lock's fencing token ([DibsLease.fencingToken]): greater than every earlier holder's, for
     * the guarded resource to refuse a stale holder's writes (`UPDATE ... SET fence = ? WHERE fence
     * < ?`).
     */
    public val fencingToken: Long
        get() = lease.fencingToken()
}

/**
 * The lock of a suspending block was found lost while the block ran (with keep-alive: taken by
 * another holder, or not extended before it would lapse): the block was cancelled with this
 * exception, which [attemptSuspending] and [executeSuspending] throw after the release. Another
 * instance may be running the same work now.
 */
@OptIn(ExperimentalCoroutinesApi::class)
public class DibsLockLostException(public val lockName: String) :
    CancellationException("lock '$lockName' was lost while its block ran: the block was cancelled"),
    CopyableThrowable<DibsLockLostException> {
    /** Never copied by kotlinx's stack-trace recovery: the caller gets this very object. */
    override fun createCopy(): DibsLockLostException? = null
}

/** How a suspending locked call ended. */
public sealed interface DibsOutcome<out T> {
    /**
     * The lock was won and the block ran.
     *
     * @property value what the block returned
     * @property ownedToTheEnd whether the lock was still ours when it was released; false means it
     *   expired while the block ran, and another instance may have run too
     * @property fencingToken the fencing token the block ran under ([DibsLockScope.fencingToken])
     */
    public data class Ran<out T>(
        val value: T,
        val ownedToTheEnd: Boolean,
        val fencingToken: Long = 0,
    ) : DibsOutcome<T>

    /** Another holder had the lock: the block did not run. */
    public data object Skipped : DibsOutcome<Nothing>
}

/**
 * Runs the suspending [block] if this process wins the lock [lockName], as [DibsClient.attempt]
 * does for a blocking task, and releases the lock when the block returns, throws or is cancelled
 * (the release is not cancellable, so a cancelled coroutine still frees the lock, for what is left
 * of [atLeast]). The block may suspend and resume on any thread: the lock is held by a [DibsLease],
 * not by a thread, and with keep-alive (`dibs.keep-alive` or `DibsOptions.keepAlive`) it is
 * extended across suspension points.
 *
 * Taking and releasing the lock are blocking network calls (bounded by the client's timeouts): they
 * run on [Dispatchers.IO], never on the caller's dispatcher. The client's [dibs.DibsListener] hears
 * the call as it hears every dibs lock (attempt, acquired or skipped, then finished and released,
 * expired or releaseFailed), from those calls' threads.
 *
 * ```kotlin
 * when (val outcome = dibs.attemptSuspending("nightly-report", Duration.ofMinutes(10)) { buildReport() }) {
 *     is DibsOutcome.Ran -> log.info("report: {}", outcome.value)
 *     DibsOutcome.Skipped -> log.debug("another instance runs it")
 * }
 * ```
 *
 * @param lockName the lock's name
 * @param atMost how long the lock is held at most (its expiry, extended by keep-alive)
 * @param atLeast how long the lock is held at least, from acquisition
 * @return [DibsOutcome.Ran] with the block's value, or [DibsOutcome.Skipped]
 * @throws IllegalArgumentException for an invalid name or durations, before any I/O
 * @throws dibs.DibsException if the lock could not be tried; the block did not run
 * @throws DibsLockLostException if, with keep-alive, the lock was found lost while the block ran:
 *   the block is cancelled with it, and it is thrown after the release
 * @throws Throwable whatever the block throws, the very same object, after the release
 */
public suspend fun <T> DibsClient.attemptSuspending(
    lockName: String,
    atMost: Duration,
    atLeast: Duration = Duration.ZERO,
    block: suspend DibsLockScope.() -> T,
): DibsOutcome<T> {
    // Not cancellable, and kept outside the withContext: on the way back to the caller's
    // dispatcher, a cancelled caller gets a CancellationException instead of withContext's value
    // (prompt cancellation), so a lease returned only as that value would be dropped, and its lock
    // held until atMost (with keep-alive, for ever).
    var taken: DibsLease? = null
    try {
        withContext(NonCancellable + Dispatchers.IO) {
            // The block runs on whatever thread resumes it, not on this IO worker: a lost lock
            // cancels it (below), and never interrupts the worker, which by then runs others'.
            taken =
                tryLock(lockName, atMost, atLeast).orElse(null)?.also { it.interruptOnLost(null) }
        }
    } catch (c: CancellationException) {
        taken?.let { release(it, c) }
        throw c
    }
    val lease = taken ?: return DibsOutcome.Skipped
    val value =
        try {
            currentCoroutineContext().ensureActive()
            // The block runs as a child, so that a lost lock cancels the block alone, with its own
            // exception. Its outcome is kept here, as a Result: what it threw is then the very
            // object
            // (kotlinx may copy one that crosses a coroutine's boundary), and it wins over a
            // cancellation of the caller that came as it failed.
            var outcome: Result<T>? = null
            try {
                coroutineScope {
                    val work = async { outcome = runCatching { DibsLockScope(lease).block() } }
                    lease.whenLost().thenRun { work.cancel(DibsLockLostException(lockName)) }
                    work.await()
                }
            } catch (c: CancellationException) {
                val failure = outcome?.exceptionOrNull()
                if (outcome == null || failure is CancellationException)
                    throw (failure as? DibsLockLostException ?: c)
            }
            outcome!!.getOrThrow()
        } catch (t: Throwable) { // cancellation included: the lock is released either way
            release(lease, t)
            throw t
        }
    return DibsOutcome.Ran(value, release(lease, null), lease.fencingToken())
}

/**
 * As [attemptSuspending], for a block whose value is not needed.
 *
 * ```kotlin
 * @Scheduled(cron = "0 0 3 * * *")
 * fun nightly() = runBlocking {
 *     dibs.executeSuspending("nightly-report", Duration.ofMinutes(10), Duration.ofSeconds(30)) {
 *         sendReport()   // a suspend fun
 *     }
 * }
 * ```
 *
 * @return true if the lock was won and the block ran
 */
public suspend fun DibsClient.executeSuspending(
    lockName: String,
    atMost: Duration,
    atLeast: Duration = Duration.ZERO,
    block: suspend DibsLockScope.() -> Unit,
): Boolean = attemptSuspending(lockName, atMost, atLeast, block) is DibsOutcome.Ran

/**
 * Releases [lease] whatever the coroutine's state. When the block failed ([failure] not null), a
 * release failure is added to it as suppressed, and a cancellation of the caller during the release
 * is not thrown: the block's own exception wins. The release itself always completes
 * (NonCancellable); its result is kept outside the withContext for the same reason as the lease.
 */
private suspend fun release(lease: DibsLease, failure: Throwable?): Boolean {
    var owned = false
    try {
        withContext(NonCancellable + Dispatchers.IO) {
            owned = lease.release(failure)
        }
    } catch (c: CancellationException) {
        if (failure == null) throw c
    } catch (e: Throwable) {
        if (failure == null) throw e
        failure.addSuppressed(e)
    }
    return owned
}

/**
 * As [attemptSuspending] with [java.time.Duration]s, for Kotlin's durations:
 * `dibs.attemptSuspending("report", 10.minutes, 30.seconds) { buildReport() }`.
 */
public suspend fun <T> DibsClient.attemptSuspending(
    lockName: String,
    atMost: kotlin.time.Duration,
    atLeast: kotlin.time.Duration = kotlin.time.Duration.ZERO,
    block: suspend DibsLockScope.() -> T,
): DibsOutcome<T> =
    attemptSuspending(lockName, atMost.toJava("atMost"), atLeast.toJava("atLeast"), block)

/**
 * As [executeSuspending] with [java.time.Duration]s, for Kotlin's durations:
 * `dibs.executeSuspending("sync", 5.minutes) { syncPartners() }`.
 */
public suspend fun DibsClient.executeSuspending(
    lockName: String,
    atMost: kotlin.time.Duration,
    atLeast: kotlin.time.Duration = kotlin.time.Duration.ZERO,
    block: suspend DibsLockScope.() -> Unit,
): Boolean = attemptSuspending(lockName, atMost, atLeast, block) is DibsOutcome.Ran

/** An infinite Kotlin duration has no java.time form: an argument error, as dibs's own are. */
private fun kotlin.time.Duration.toJava(name: String): Duration {
    require(isFinite()) { "$name must be finite, got $this" }
    return toJavaDuration()
}
