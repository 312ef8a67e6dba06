package dibs.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.env.Environment;

/**
 * The jobs named up front by {@link DibsJob}, expected from start-up on: each method is checked as
 * its bean is made ({@link StartupChecks}), and its job handed to {@link DibsExpectations} once
 * every singleton is made (a bean made later, at once), with the period of its
 * {@code @Scheduled}. So the job's overdue clock starts with the application, not with its first
 * attempt, which may never come. A {@link CatchUp} method without {@link DibsJob} is expected
 * from start-up too, its job's name learned at its first attempt.
 */
final class ExpectedAtStart
        implements BeanPostProcessor, SmartInitializingSingleton, BeanFactoryAware, EnvironmentAware {
    /** A job named up front (or null: a method's, learned at its first attempt), its period, and where. */
    private record Named(String job, Method method, Duration period, String source) {}

    private final List<Named> pending = new CopyOnWriteArrayList<>();
    private volatile DibsExpectations expectations;
    private BeanFactory beanFactory;
    private Environment environment;

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        Map<Method, DibsJob> found = MethodIntrospector.selectMethods(
                type, (MethodIntrospector.MetadataLookup<DibsJob>) m -> m.getAnnotation(DibsJob.class));
        found.forEach((m, annotation) -> {
            String where = "@DibsJob of " + DibsExpectations.methodName(m);
            String job = StartupChecks.jobOf(where, annotation.value(), environment::resolveRequiredPlaceholders);
            Optional<Duration> period = StartupChecks.periodOf(where, m);
            period.ifPresent(p -> expect(new Named(job, m, p, where)));
        });
        MethodIntrospector.selectMethods(type, (MethodIntrospector.MetadataLookup<CatchUp>)
                        m -> m.getAnnotation(DibsJob.class) == null ? m.getAnnotation(CatchUp.class) : null)
                .forEach((m, catchUp) -> {
                    String where = "@CatchUp of " + DibsExpectations.methodName(m);
                    StartupChecks.check(m, catchUp); // first: its cron's own error, named as CatchUpAtStart names it
                    StartupChecks.periodOf(where, m).ifPresent(p -> expect(new Named(null, m, p, where)));
                });
        return bean;
    }

    private static void handTo(DibsExpectations e, Named named) {
        if (named.job() != null) {
            e.expectFromStart(named.job(), named.period(), named.source());
        } else {
            e.expectMethod(named.method(), named.period(), named.source());
        }
    }

    private synchronized void expect(Named named) {
        DibsExpectations e = expectations;
        if (e != null) {
            handTo(e, named);
        } else {
            pending.add(named);
        }
    }

    @Override
    public synchronized void afterSingletonsInstantiated() {
        DibsExpectations e = beanFactory.getBeanProvider(DibsExpectations.class).getIfAvailable();
        if (e == null) {
            return; // the application replaced or left out the fleet view
        }
        expectations = e;
        for (Named named : pending) {
            handTo(e, named);
        }
        pending.clear();
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }
}
