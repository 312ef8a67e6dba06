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
 * attempt, which may never come.
 */
final class ExpectedAtStart
        implements BeanPostProcessor, SmartInitializingSingleton, BeanFactoryAware, EnvironmentAware {
    /** A job named up front, its period, and where it was named. */
    private record Named(String job, Duration period, String source) {}

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
            String where = "@DibsJob of " + m.getDeclaringClass().getName() + "." + m.getName() + "()";
            String job = StartupChecks.jobOf(where, annotation.value(), environment::resolveRequiredPlaceholders);
            Optional<Duration> period = StartupChecks.periodOf(where, m);
            period.ifPresent(p -> expect(new Named(job, p, where)));
        });
        return bean;
    }

    private synchronized void expect(Named named) {
        DibsExpectations e = expectations;
        if (e != null) {
            e.expectFromStart(named.job(), named.period(), named.source());
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
            e.expectFromStart(named.job(), named.period(), named.source());
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
