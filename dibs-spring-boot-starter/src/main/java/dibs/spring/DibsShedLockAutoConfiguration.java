package dibs.spring;

import dibs.shedlock.TaskOutcome;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;

/**
 * Where ShedLock's Spring integration and dibs-shedlock are both present: every
 * {@code @SchedulerLock} method runs inside {@link TaskOutcome#record}, so that the run history
 * of its dibs lock records whether it threw (ShedLock releases the lock without the outcome, and
 * a bare provider would record every run as a success). The advice sits just outside ShedLock's
 * own (whose order is, by default, {@link Ordered#LOWEST_PRECEDENCE}), and touches nothing when
 * the lock provider is not dibs's.
 */
@AutoConfiguration
@ConditionalOnClass(name = {"net.javacrumbs.shedlock.spring.annotation.SchedulerLock", "dibs.shedlock.TaskOutcome"})
public class DibsShedLockAutoConfiguration {
    /** Made by Spring. */
    public DibsShedLockAutoConfiguration() {}

    /** @return the advice around {@code @SchedulerLock} methods */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static Advisor dibsSchedulerLockOutcome() {
        MethodInterceptor recorded = invocation -> TaskOutcome.record(invocation::proceed);
        DefaultPointcutAdvisor advisor =
                new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, SchedulerLock.class, true), recorded);
        advisor.setOrder(Ordered.LOWEST_PRECEDENCE - 1);
        return advisor;
    }
}
