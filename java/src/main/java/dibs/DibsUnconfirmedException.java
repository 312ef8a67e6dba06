package dibs;

/**
 * Durable acquire won the lock but could not confirm it: fewer replicas than it asks for
 * acknowledged the lock in time (see the {@code durable} conn key), so a failover could have lost
 * it. The lock was given back and the task did not run.
 *
 * <p>Thrown by the native acquire only; the lease turns it into its own ending (a warning and
 * {@link DibsListener#unconfirmed}), so callers see a call that did not run, never this.
 */
final class DibsUnconfirmedException extends DibsException {
    private static final long serialVersionUID = 1L;

    /** The constructor JNI {@code ThrowNew} uses. */
    DibsUnconfirmedException(String message) {
        super(message);
    }
}
