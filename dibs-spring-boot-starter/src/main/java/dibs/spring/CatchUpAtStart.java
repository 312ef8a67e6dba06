package dibs.spring;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.support.CronExpression;
import org.springframework.util.ReflectionUtils;

/**
 * The catch-up of ticks that passed while no instance was up: when the application is ready,
 * each {@code @Scheduled} cron method with {@link CatchUp} (a policy other than {@code skip}) is
 * run once, on the scheduler of the {@code @Scheduled} methods, as the fire of its latest
 * tick at or before now, with every tick past ({@link DibsScheduledTick#catchUp()}). Its
 * {@code executeOnce} then runs the missed ticks the policy picks, and only those the history
 * proves that no instance ran; a method whose latest tick is older than its window is not run.
 * Each {@link CatchUp} is checked as its bean is made ({@link StartupChecks}): one that cannot be
 * used fails the start-up.
 */
final class CatchUpAtStart implements BeanPostProcessor, ApplicationListener<ApplicationReadyEvent>, EnvironmentAware {
    private static final System.Logger LOG = System.getLogger("dibs.spring");

    /**
     * A bean and its method with {@link CatchUp}: the one to invoke (on a proxy, the proxy's),
     * its {@code @Scheduled} and its {@link CatchUp}, read once from the class it is declared in.
     */
    private static final class Target {
        final Object bean;
        final Method method;
        final Scheduled scheduled;
        final CatchUp annotation;

        Target(Object bean, Method method, Scheduled scheduled, CatchUp annotation) {
            this.bean = bean;
            this.method = method;
            this.scheduled = scheduled;
            this.annotation = annotation;
        }
    }

    private final List<Target> targets = new CopyOnWriteArrayList<>();

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        Map<Method, CatchUp> found = MethodIntrospector.selectMethods(
                type, (MethodIntrospector.MetadataLookup<CatchUp>) m -> m.getAnnotation(CatchUp.class));
        // Checked now, placeholders and all: a typo fails the start-up, not every fire.
        found.forEach((m, annotation) -> targets.add(new Target(
                bean,
                AopUtils.selectInvocableMethod(m, bean.getClass()),
                StartupChecks.check(m, annotation),
                annotation)));
        return bean;
    }

    @Override
    public void setEnvironment(Environment environment) {
        // Before any bean is checked: a @CatchUp's placeholders resolve as the application's.
        DibsScheduledTick.resolvePlaceholdersWith(environment::resolveRequiredPlaceholders);
    }

    @Override
    public void onApplicationEvent(ApplicationReadyEvent event) {
        if (targets.isEmpty() || event.getApplicationContext().getParent() != null) {
            return;
        }
        // On the scheduler of the @Scheduled methods, so on their threads (virtual ones when the
        // application asks for them), as a fire of theirs would run.
        TaskScheduler scheduler = event.getApplicationContext()
                .getBeanProvider(SchedulingConfigurer.class)
                .orderedStream()
                .filter(DibsTickScheduler.Configurer.class::isInstance)
                .map(c -> ((DibsTickScheduler.Configurer) c).scheduler())
                .filter(java.util.Objects::nonNull)
                .findFirst()
                .orElse(null);
        Runnable all = () -> targets.forEach(target -> catchUp(
                target,
                scheduler instanceof DibsTickScheduler ticks
                        ? ticks.clockZone(DibsScheduledTick.resolve(target.scheduled.scheduler()))
                        : null));
        if (scheduler != null) {
            scheduler.schedule(all, Instant.now());
        } else { // no scheduler configured (no @EnableScheduling): a thread of the starter's own
            Thread thread = new Thread(all, "dibs-catch-up");
            thread.setDaemon(true);
            thread.start();
        }
    }

    /**
     * Runs one method as the fire of its latest tick, if that is within its window; a cron
     * without a zone fires in {@code clockZone} (its scheduler's clock's; null: the system's),
     * and its ticks are named so.
     */
    private static void catchUp(Target target, java.time.ZoneId clockZone) {
        String where = target.method.getDeclaringClass().getSimpleName() + "." + target.method.getName();
        try {
            if (DibsScheduledTick.policyOf(target.annotation) == dibs.DibsCatchUp.Policy.SKIP) {
                return;
            }
            Optional<Instant> latest = latestTick(target, clockZone);

            if (latest.isEmpty()) {
                return;
            }
            ReflectionUtils.makeAccessible(target.method);
            DibsScheduledTick.runAtStart(latest.get(), clockZone, () -> invoke(target));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "dibs: the catch-up of " + where + " at start-up failed", e);
        }
    }

    /** The latest fire of the method's cron at or before now, if it is within the window. */
    private static Optional<Instant> latestTick(Target target, java.time.ZoneId clockZone) {
        String cron = DibsScheduledTick.resolve(target.scheduled.cron());
        if (cron.equals(Scheduled.CRON_DISABLED)) {
            return Optional.empty();
        }
        ZonedDateTime now = ZonedDateTime.now(DibsScheduledTick.zoneOf(target.scheduled, clockZone));
        ZonedDateTime from = DibsScheduledTick.oldestTick(now, DibsScheduledTick.windowOf(target.annotation));
        return DibsScheduledTick.latestFire(CronExpression.parse(cron), now)
                .filter(t -> !t.isBefore(from))
                .map(ZonedDateTime::toInstant);
    }

    private static void invoke(Target target) {
        try {
            target.method.invoke(target.bean);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
