package dibs.spring;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicReference;
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
 * for {@link DibsScheduledTick#current()}. The trigger runs the task once per fire, and computes
 * the next fire only after the run, so the fire it last computed is the run's own. Every call goes
 * to the application's scheduler; the task and the trigger are the same, observed.
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
        @Override
        public void configureTasks(ScheduledTaskRegistrar registrar) {
            TaskScheduler scheduler = registrar.getScheduler();
            if (scheduler != null && !(scheduler instanceof DibsTickScheduler)) {
                registrar.setTaskScheduler(new DibsTickScheduler(scheduler));
            }
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }

    @Override
    public Clock getClock() {
        return scheduler.getClock();
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable task, Trigger trigger) {
        AtomicReference<Instant> fire = new AtomicReference<>();
        Trigger recording = new Trigger() {
            @Override
            public Instant nextExecution(TriggerContext context) {
                Instant next = trigger.nextExecution(context);
                fire.set(next);
                return next;
            }
        };
        return scheduler.schedule(new Fired(task, fire), recording);
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable task, Instant startTime) {
        return scheduler.schedule(task, startTime);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Instant startTime, Duration period) {
        return scheduler.scheduleAtFixedRate(task, startTime, period);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable task, Duration period) {
        return scheduler.scheduleAtFixedRate(task, period);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Instant startTime, Duration delay) {
        return scheduler.scheduleWithFixedDelay(task, startTime, delay);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, Duration delay) {
        return scheduler.scheduleWithFixedDelay(task, delay);
    }

    /**
     * A trigger's task, run as the fire its trigger last computed. It keeps the task's qualifier,
     * by which Spring picks the scheduler of a {@code @Scheduled(scheduler = ...)} method.
     */
    private static final class Fired implements SchedulingAwareRunnable {
        private final Runnable task;
        private final AtomicReference<Instant> fire;

        Fired(Runnable task, AtomicReference<Instant> fire) {
            this.task = task;
            this.fire = fire;
        }

        @Override
        public void run() {
            DibsScheduledTick.runFiredAt(fire.get(), task);
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
}
