package dibs;

import java.time.Instant;

/** A job with a recorded run, as {@link DibsClient#jobs} found it. */
public final class DibsJob {
    private final String name;
    private final Instant lastRecordedAt;

    DibsJob(String name, Instant lastRecordedAt) {
        this.name = name;
        this.lastRecordedAt = lastRecordedAt;
    }

    /** @return the job's name (see {@link Dibs#jobOf}) */
    public String name() {
        return name;
    }

    /** @return when its last run was recorded, by the Redis server's clock */
    public Instant lastRecordedAt() {
        return lastRecordedAt;
    }

    @Override
    public String toString() {
        return "DibsJob[" + name + ", last recorded " + lastRecordedAt + "]";
    }
}
