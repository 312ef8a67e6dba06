package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Issue 42 (4): a {@code @CatchUp} or {@code dibs.jobs.*} value that cannot be used fails the
 * start-up with a {@link DibsStartupException} naming it. Before, a typo was read at each fire,
 * which then threw before any lock was tried, and start-up logged one WARN. No Redis is needed:
 * nothing here gets as far as I/O.
 */
class StartupChecksTest {
    static class Typo {
        @Scheduled(cron = "0 0 2 * * *")
        @CatchUp(policy = "lastest", window = "PT12H")
        void nightly() {}
    }

    static class NotIso {
        @Scheduled(cron = "0 0 2 * * *")
        @CatchUp(window = "12h")
        void nightly() {}
    }

    static class Unresolved {
        @Scheduled(cron = "0 0 2 * * *")
        @CatchUp(window = "${report.window}")
        void nightly() {}
    }

    static class NotACron {
        @Scheduled(fixedRate = 60_000)
        @CatchUp(window = "PT12H")
        void sync() {}
    }

    static class Resolved {
        @Scheduled(cron = "${report.cron}")
        @CatchUp(policy = "${report.policy}", window = "${report.window}")
        void nightly() {}
    }

    private static DibsStartupException failure(Class<?> bean, String... properties) {
        DibsStartupException[] found = new DibsStartupException[1];
        Contexts.runner().withBean(bean).withPropertyValues(properties).run(context -> {
            assertThat(context).hasFailed();
            found[0] = Contexts.startupException(context.getStartupFailure());
        });
        return found[0];
    }

    @Test
    void aCatchUpThatCannotBeReadFailsTheStartupNamingIt() {
        String method = "@CatchUp of " + StartupChecksTest.class.getName();
        assertThat(failure(Typo.class).property()).isEqualTo(method + "$Typo.nightly() policy");
        assertThat(failure(Typo.class).getMessage()).contains("lastest");
        assertThat(failure(NotIso.class).property()).isEqualTo(method + "$NotIso.nightly() window");
        assertThat(failure(Unresolved.class).property()).isEqualTo(method + "$Unresolved.nightly() window");
        assertThat(failure(Unresolved.class).getMessage()).contains("report.window");
        assertThat(failure(NotACron.class).property()).isEqualTo(method + "$NotACron.sync()");
        assertThat(failure(Resolved.class, "report.cron=0 0 2 * *", "report.policy=all", "report.window=PT1H")
                        .property())
                .isEqualTo(method + "$Resolved.nightly() @Scheduled cron");
        assertThat(failure(Resolved.class, "report.cron=0 0 2 * * *", "report.policy=all", "report.window=P31D")
                        .property())
                .isEqualTo(method + "$Resolved.nightly() window");
        Contexts.runner()
                .withBean(Resolved.class)
                .withPropertyValues("report.cron=0 0 2 * * *", "report.policy=all", "report.window=PT1H")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void jobDurationsThatCannotBeUsedFailTheStartupNamingThem() {
        assertThat(failure(Object.class, "dibs.jobs.expect-every.report=0s").property())
                .isEqualTo("dibs.jobs.expect-every.report");
        assertThat(failure(Object.class, "dibs.jobs.refresh=0s").property()).isEqualTo("dibs.jobs.refresh");
        assertThat(failure(Object.class, "dibs.jobs.grace=-1s").property()).isEqualTo("dibs.jobs.grace");
        assertThat(failure(Object.class, "dibs.jobs.min-duration.export=0s").property())
                .isEqualTo("dibs.jobs.min-duration.export");
        assertThat(failure(Object.class, "dibs.jobs.max-duration.backup=-5m").property())
                .isEqualTo("dibs.jobs.max-duration.backup");
        assertThat(failure(Object.class, "dibs.jobs.grace-after-start.backup=-1s")
                        .property())
                .isEqualTo("dibs.jobs.grace-after-start.backup");
    }

    @Test
    void aMisspeltDibsPropertyFailsTheStartupNamingIt() {
        DibsStartupException typo = failure(Object.class, "dibs.keep-alvie=true");
        assertThat(typo.property()).isEqualTo("dibs.keep-alvie");
        assertThat(typo.getMessage()).contains("did you mean dibs.keep-alive?");
        assertThat(failure(Object.class, "dibs.jobs.expect-evry.report=1h").property())
                .isEqualTo("dibs.jobs.expect-evry.report");
        assertThat(failure(Object.class, "dibs.retry-unended-tick=true").getMessage())
                .contains("did you mean dibs.retry-unended-ticks?");
        assertThat(failure(Object.class, "dibs.actuator.force-releases=true").property())
                .isEqualTo("dibs.actuator.force-releases");
        assertThat(failure(Object.class, "dibs.job.grace=1s").property()).isEqualTo("dibs.job.grace");
        assertThat(failure(Object.class, "dibs.metrics.max-tag=5").getMessage())
                .contains("did you mean dibs.metrics.max-tags?");
        // Refused at start-up with lazy initialization too, where no dibs bean is made then.
        DibsStartupException[] lazy = new DibsStartupException[1];
        Contexts.runner()
                .withBean(org.springframework.boot.LazyInitializationBeanFactoryPostProcessor.class)
                .withPropertyValues("dibs.keep-alvie=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    lazy[0] = Contexts.startupException(context.getStartupFailure());
                });
        assertThat(lazy[0].property()).isEqualTo("dibs.keep-alvie");
        // Names far from every one of the starter's are another's: the application's own
        // @ConfigurationProperties("dibs.reports"), a build's dibs.root.
        Contexts.runner()
                .withPropertyValues("dibs.reports.bucket=b", "dibs.root=/src/dibs")
                .run(context -> assertThat(context).hasNotFailed());
        // Every name the starter reads, in each of Spring's spellings, starts; and the native
        // loader's system properties are not the starter's to refuse.
        Contexts.runner()
                .withPropertyValues(
                        "dibs.keep-alive=false",
                        "dibs.keepAlive=false",
                        "dibs.retry_unended_ticks=yes",
                        "dibs.jobs.expect-every.nightly-report=24h",
                        "dibs.jobs.expectEvery.weekly=7d",
                        "dibs.jobs.scan-budget=5s",
                        "dibs.metrics.enabled=true",
                        "dibs.actuator.force-release=false",
                        "dibs.native.tmpdir=/tmp")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(DibsProperties.class).retryUnendedTicks())
                            .isTrue();
                });
    }
}
