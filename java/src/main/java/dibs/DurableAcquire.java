package dibs;

/**
 * How an acquire makes sure that a failover cannot lose the lock it just took (the conn key
 * {@code durable}): the {@code SET} is followed, in the same round trip, by {@code WAIT} (or
 * {@code WAITAOF}) within half the read timeout; a lock not acknowledged in time is given back,
 * and the call does not run (its own ending: a warning and {@link DibsListener#unconfirmed}).
 *
 * <pre>{@code
 * DibsOptions.builder().uri("redis://redis:6379").durable(DurableAcquire.replicas(2)).build();
 * }</pre>
 *
 * Immutable, compared by value.
 */
public final class DurableAcquire {
    /** Which kind of acknowledgement an acquire waits for. */
    public enum Mode {
        /**
         * The default: 1 replica behind Sentinel, and elsewhere where the master reports one
         * connected; a server that refuses {@code WAIT} is warned about once and used without.
         */
        AUTO,
        /** No waiting: a failover right after the acquire may lose the lock. */
        OFF,
        /** {@code WAIT} for a number of replicas; a server that refuses it fails the call. */
        REPLICAS,
        /** {@code WAITAOF}: the master's own AOF fsync and a number of replicas' (Redis 7.2+). */
        AOF
    }

    private static final DurableAcquire AUTO = new DurableAcquire(Mode.AUTO, 0);
    private static final DurableAcquire OFF = new DurableAcquire(Mode.OFF, 0);

    private final Mode mode;
    private final int replicas;

    private DurableAcquire(Mode mode, int replicas) {
        this.mode = mode;
        this.replicas = replicas;
    }

    /** @return the default: see {@link Mode#AUTO} */
    public static DurableAcquire auto() {
        return AUTO;
    }

    /** @return no waiting: see {@link Mode#OFF} */
    public static DurableAcquire off() {
        return OFF;
    }

    /**
     * The range is checked where every conn key is, when the options are first used (an error
     * naming {@code durable}): 1 to 16, and 0 means {@link #off()}.
     *
     * @param replicas how many replicas must acknowledge the lock
     * @return {@code WAIT} for them: see {@link Mode#REPLICAS}
     */
    public static DurableAcquire replicas(int replicas) {
        return new DurableAcquire(Mode.REPLICAS, replicas);
    }

    /**
     * @param replicas how many replicas must have fsynced the lock to their AOF too, 0 to 16
     *     (checked when the options are first used, as {@link #replicas(int)})
     * @return {@code WAITAOF} for the master and them: see {@link Mode#AOF}
     */
    public static DurableAcquire aof(int replicas) {
        return new DurableAcquire(Mode.AOF, replicas);
    }

    /** @return the kind of acknowledgement */
    public Mode mode() {
        return mode;
    }

    /** @return the replicas waited for ({@link Mode#REPLICAS}, {@link Mode#AOF}); 0 otherwise */
    public int replicas() {
        return replicas;
    }

    /**
     * @return the value of the conn key {@code durable} that says the same: {@code auto},
     *     {@code off}, {@code 2}, {@code aof:1}
     */
    @Override
    public String toString() {
        switch (mode) {
            case AUTO:
                return "auto";
            case OFF:
                return "off";
            case REPLICAS:
                return Integer.toString(replicas);
            default:
                return "aof:" + replicas;
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DurableAcquire
                && ((DurableAcquire) o).mode == mode
                && ((DurableAcquire) o).replicas == replicas;
    }

    @Override
    public int hashCode() {
        return mode.hashCode() * 31 + replicas;
    }
}
