package dibs.spring;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledFuture;
import org.springframework.core.Ordered;
import org.springframework.scheduling.SchedulingAwareRunnable;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.Trigger;
import org.springframework.scheduling.TriggerContext;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/**
 * The scheduler of {@code @Scheduled} methods, as the application configured it, with one thing
 * added: each run of a trigger's task (a cron) knows the fire time its trigger computed for it,
 * for {@link DibsScheduledTick#current()}. The trigger runs the task once per fire, in the order of
 * its fires, so each run takes the oldest fire no run has taken yet. Which fire the trigger computed
 * last says nothing: a scheduler that hands each run to a thread of its own (Spring's
 * SimpleAsyncTaskScheduler, with virtual threads) computes the next fire right after the hand-off,
 * often before the run's thread starts. Each run of any task is also a {@link DibsScheduledRun},
 * so that a locked call that threw in it is ended with it. Every call goes to the application's
 * scheduler; the task and the trigger are the same, observed.
 */
final class DibsTickScheduler implements TaskScheduler {
    private final TaskScheduler scheduler;

    private DibsTickScheduler(TaskScheduler scheduler) {
        this.scheduler = scheduler;
    }

    /**
     * Put last among the application's scheduling configurers: it wraps whatever scheduler the
     * registrar ends up with (Spring's router to the application's scheduler beans, by default).
     */
    static final class Configurer implements SchedulingConfigurer, Ordered {
        /** The scheduler of the application's {@code @Scheduled} methods, once configured. */
        private volatile TaskScheduler scheduler;

        @Override
        public void configureTasks(ScheduledTaskRegistrar registrar) {
            TaskScheduler scheduler = registrar.getScheduler();
            if (scheduler != null && !(scheduler instanceof DibsTickScheduler)) {
                registrar.setTaskScheduler(new DibsTickScheduler(scheduler));
            }
            this.scheduler = registrar.getScheduler();
        }

        /**
         * @return the scheduler that runs the application's {@code @Scheduled} methods, on their
         *     threads (virtual ones when the application asks for them); null before scheduling is
         *     configured, or without it
         */
        TaskScheduler scheduler() {
            return scheduler;
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }

    /**
     * The zone of the clock the triggers of the {@code @Scheduled} methods with {@code qualifier}
     * ({@code scheduler = ...}, empty for the default) read, as the last one computed a fire;
     * else that of this scheduler's own clock. Spring's router to the application's schedulers
     * answers the system's clock to {@link #getClock()}, while each trigger reads its target
     * scheduler's.
     */
    java.time.ZoneId clockZone(String qualifier) {
        java.time.ZoneId seen = triggerClockZones.get(qualifier);
        return seen != null ? seen : scheduler.getClock().getZone();
    }

    /** By qualifier (empty for the default scheduler): the zone its triggers' clock is in. */
    private final java.util.Map<String, java.time.ZoneId> triggerClockZones =
            new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public Clock getClock() {
        return scheduler.getClock();
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable task, Trigger trigger) {
        // A fire waits here from when the trigger computes it until its run starts: one fire with
        // a scheduler that runs on its own thread, more only while handed-off runs start late.
        Queue<Instant> fires = new ConcurrentLinkedQueue<>();
        Fired fired = new Fired(task, fires);
        Trigger recording = new Trigger() {
            @Override
            public Instant nextExecution(TriggerContext context) {
                fired.clockZone = context.getClock().getZone(); // the clock the trigger reads
                String qualifier = task instanceof SchedulingAwareRunnable s ? s.getQualifier() : null;
                triggerClockZones.put(qualifier == null ? "" : qualifier, fired.clockZone);
                Instant next = trigger.nextExecution(context);
                if (next != null) {
                    fires.add(next);
                }
                return next;
            }
        };
        return scheduler.schedule(fired, recording);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable task, Instant startTime) {
        return scheduler.schedule(new Run(task), startTime);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Instant startTime, Duration period) {
        return scheduler.scheduleAtFixedRate(new Run(task), startTime, period);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Duration period) {
        return scheduler.scheduleAtFixedRate(new Run(task), period);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Instant startTime, Duration delay) {
        return scheduler.scheduleWithFixedDelay(new Run(task), startTime, delay);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Duration delay) {
        return scheduler.scheduleWithFixedDelay(new Run(task), delay);
    }

    /**
     * A task run as a {@link DibsScheduledRun}, so that what it left unfinished is ended with it.
     * It keeps the task's qualifier, by which Spring picks the scheduler of a
     * {@code @Scheduled(scheduler = ...)} method.
     */
    private static class Run implements SchedulingAwareRunnable {
        final Runnable task;

        Run(Runnable task) {
            this.task = task;
        }

        @Override
        public void run() {
            DibsScheduledRun.run(task);
        }

        @Override
        public boolean isLongLived() {
            return !(task instanceof SchedulingAwareRunnable s) || s.isLongLived();
        }

        @Override
        public String getQualifier() {
            return task instanceof SchedulingAwareRunnable s ? s.getQualifier() : null;
        }

        @Override
        public String toString() {
            return task.toString();
        }
    }

    /** A trigger's task, run as the oldest fire of its trigger no run has taken. */
    private static final class Fired extends Run {
        private final Queue<Instant> fires;
        /** The zone of a cron without one of its own (Spring's CronTrigger takes the clock's). */
        volatile java.time.ZoneId clockZone;

        Fired(Runnable task, Queue<Instant> fires) {
            super(task);
            this.fires = fires;
        }

        @Override
        public void run() {
            DibsScheduledTick.runFiredAt(fires.poll(), clockZone, () -> DibsScheduledRun.run(task));
        }
    }
}
