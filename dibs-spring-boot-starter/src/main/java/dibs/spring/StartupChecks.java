package dibs.spring;

import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.support.CronExpression;

/**
 * The checks, at start-up, of values the starter would otherwise read only later (at a fire, at a
 * refresh): the {@code dibs.jobs.*} durations, and each {@link CatchUp} method's policy, window,
 * cron and zone, placeholders resolved; and that every {@code dibs.*} property set is one the
 * starter reads. A value that cannot be used fails the start-up with a
 * {@link DibsStartupException} naming it, instead of every fire of the job throwing.
 */
final class StartupChecks {
    private static final ConfigurationPropertyName DIBS = ConfigurationPropertyName.of(DibsProperties.PREFIX);
    /** The native loader's system properties (dibs.native.path, dibs.native.tmpdir), not the starter's. */
    private static final ConfigurationPropertyName NATIVE = ConfigurationPropertyName.of("dibs.native");

    private StartupChecks() {}

    /**
     * Runs {@link #checkNames} when the context is refreshed, before any bean is made: with
     * {@code spring.main.lazy-initialization} too, where no dibs bean may be made at start-up.
     */
    static final class Names
            implements org.springframework.beans.factory.config.BeanFactoryPostProcessor,
                    org.springframework.context.EnvironmentAware {
        private Environment environment;

        @Override
        public void setEnvironment(Environment environment) {
            this.environment = environment;
        }

        @Override
        public void postProcessBeanFactory(
                org.springframework.beans.factory.config.ConfigurableListableBeanFactory beanFactory) {
            checkNames(environment);
        }
    }

    /**
     * Every {@code dibs.*} property the application sets (its files, its command line, its
     * default properties) that looks like one of the starter's is one {@link DibsProperties} binds: a
     * misspelt name ({@code dibs.keep-alvie}, {@code dibs.jobs.expect-evry.report}) fails the
     * start-up, where Spring would ignore it and run with the default. Refused: a name under one
     * of the starter's sections ({@code dibs.jobs}, {@code dibs.metrics}, {@code dibs.actuator})
     * that it does not read, and a name whose first part is at most 2 edits from one of the
     * starter's. Left alone: a name far from all of them ({@code dibs.reports.bucket} of the
     * application's own properties), and environment variables and system properties (see
     * {@link #notTheApplications}).
     */
    static void checkNames(Environment environment) {
        List<ConfigurationPropertyName> leaves = new ArrayList<>();
        List<ConfigurationPropertyName> maps = new ArrayList<>(List.of(NATIVE));
        List<ConfigurationPropertyName> sections = new ArrayList<>();
        names(DIBS, DibsProperties.class, leaves, maps, sections);
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource all) || notTheApplications(source)) {
                continue;
            }
            all.filter(DIBS::isAncestorOf).stream().forEach(name -> {
                boolean read =
                        leaves.contains(name) || maps.stream().anyMatch(m -> m.equals(name) || m.isAncestorOf(name));
                if (!read && looksLikeOurs(name, leaves, maps, sections)) {
                    throw new DibsStartupException(name.toString(), "is not a dibs property" + nearest(name, leaves));
                }
            });
        }
    }

    /**
     * Whether {@code source} holds what others set too: environment variables (a {@code DIBS_*}
     * variable may be another program's), and system properties (a build passes its own there:
     * Maven's {@code -Ddibs.natives=all} reaches a test JVM as one).
     */
    private static boolean notTheApplications(ConfigurationPropertySource source) {
        Object underlying = source.getUnderlyingSource();
        return underlying instanceof SystemEnvironmentPropertySource
                || (underlying instanceof org.springframework.core.env.PropertySource<?> p
                        && org.springframework.core.env.StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME
                                .equals(p.getName()));
    }

    /** Whether an unread {@code name} is in one of the starter's sections, or near one of its names. */
    private static boolean looksLikeOurs(
            ConfigurationPropertyName name,
            List<ConfigurationPropertyName> leaves,
            List<ConfigurationPropertyName> maps,
            List<ConfigurationPropertyName> sections) {
        if (sections.stream().anyMatch(s -> s.isAncestorOf(name))) {
            return true;
        }
        String first = name.getElement(1, ConfigurationPropertyName.Form.UNIFORM);
        java.util.stream.Stream<ConfigurationPropertyName> ours =
                java.util.stream.Stream.of(leaves, maps, sections).flatMap(List::stream);
        return ours.filter(k -> k.getNumberOfElements() > 1)
                .map(k -> k.getElement(1, ConfigurationPropertyName.Form.UNIFORM))
                .anyMatch(k -> distance(first, k) <= 2);
    }

    /**
     * The names a record of the properties binds under {@code prefix}: its leaves, its maps'
     * prefixes, and its records' (sections).
     */
    private static void names(
            ConfigurationPropertyName prefix,
            Class<?> type,
            List<ConfigurationPropertyName> leaves,
            List<ConfigurationPropertyName> maps,
            List<ConfigurationPropertyName> sections) {
        for (RecordComponent c : type.getRecordComponents()) {
            ConfigurationPropertyName name = prefix.append(dashed(c.getName()));
            if (c.getType().isRecord()) {
                sections.add(name);
                names(name, c.getType(), leaves, maps, sections);
            } else if (Map.class.isAssignableFrom(c.getType())) {
                maps.add(name);
            } else {
                leaves.add(name);
            }
        }
    }

    private static String dashed(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
    }

    /** "; did you mean ...?" for the known name closest to {@code name}, if it is close. */
    private static String nearest(ConfigurationPropertyName name, List<ConfigurationPropertyName> known) {
        String typed = name.toString();
        String best = null;
        int bestDistance = 4; // more edits than 3 is another name, not a typo
        for (ConfigurationPropertyName k : known) {
            int d = distance(typed, k.toString());
            if (d < bestDistance) {
                best = k.toString();
                bestDistance = d;
            }
        }
        return best == null
                ? " (the starter reads no such name; its dibs.* properties are listed in its README)"
                : "; did you mean " + best + "?";
    }

    /** The Levenshtein distance of two short names. */
    private static int distance(String a, String b) {
        int[] row = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            row[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            int diagonal = row[0];
            row[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int up = row[j];
                row[j] = Math.min(
                        Math.min(row[j] + 1, row[j - 1] + 1), diagonal + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1));
                diagonal = up;
            }
        }
        return row[b.length()];
    }

    /** {@code dibs.metrics.max-tags}: at least 1. */
    static void check(DibsProperties.Metrics metrics) {
        if (metrics.maxTags() < 1) {
            throw new DibsStartupException("dibs.metrics.max-tags", "must be at least 1, got " + metrics.maxTags());
        }
    }

    /** The {@code dibs.jobs.*} durations: each period and limit more than 0, each grace not negative. */
    static void check(DibsProperties.Jobs jobs) {
        positive("dibs.jobs.refresh", jobs.refresh());
        if (jobs.grace() != null) {
            notNegative("dibs.jobs.grace", jobs.grace());
        }
        each("dibs.jobs.expect-every.", jobs.expectEvery(), true);
        each("dibs.jobs.min-duration.", jobs.minDuration(), true);
        each("dibs.jobs.max-duration.", jobs.maxDuration(), true);
        each("dibs.jobs.grace-after-start.", jobs.graceAfterStart(), false);
    }

    private static void each(String prefix, Map<String, Duration> byJob, boolean positive) {
        byJob.forEach((job, d) -> {
            if (positive) {
                positive(prefix + job, d);
            } else {
                notNegative(prefix + job, d);
            }
        });
    }

    private static void positive(String property, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new DibsStartupException(property, "must be more than 0, got " + d);
        }
    }

    private static void notNegative(String property, Duration d) {
        if (d == null || d.isNegative()) {
            throw new DibsStartupException(property, "must not be negative, got " + d);
        }
    }

    /**
     * A method with {@link CatchUp}: it must be {@code @Scheduled} with a cron that parses, in a
     * zone that exists, and its policy and window must be readable.
     *
     * @return the method's {@code @Scheduled} with the cron
     */
    static Scheduled check(Method method, CatchUp annotation) {
        String where = "@CatchUp of " + method.getDeclaringClass().getName() + "." + method.getName() + "()";
        Scheduled scheduled = DibsScheduledTick.cronOf(method)
                .orElseThrow(() -> new DibsStartupException(where, "is for a @Scheduled cron method"));
        if (method.getParameterCount() != 0) {
            throw new DibsStartupException(where, "is for a method without parameters");
        }
        read(where + " policy", () -> DibsScheduledTick.policyOf(annotation));
        read(where + " window", () -> DibsScheduledTick.windowOf(annotation));
        String cron = read(where + " @Scheduled cron", () -> DibsScheduledTick.resolve(scheduled.cron()));
        if (!cron.equals(Scheduled.CRON_DISABLED)) {
            read(where + " @Scheduled cron", () -> CronExpression.parse(cron));
        }
        read(where + " @Scheduled zone", () -> DibsScheduledTick.zoneOf(scheduled));
        return scheduled;
    }

    /**
     * A {@link DibsJob}'s name, placeholders resolved: it must be a job's own name (not a
     * per-tick lock name), as its runs are recorded.
     */
    static String jobOf(String where, String value, java.util.function.UnaryOperator<String> placeholders) {
        String job = read(where, () -> placeholders.apply(value));
        String own = read(where, () -> dibs.Dibs.jobOf(job));
        if (job.isBlank() || !own.equals(job)) {
            throw new DibsStartupException(
                    where, "must name a job, as its runs are recorded ('" + own + "'), got '" + job + "'");
        }
        return job;
    }

    /**
     * The period of a {@link DibsJob} method's {@code @Scheduled} (a suspending function's too):
     * empty for a disabled cron ({@code "-"}).
     */
    static java.util.Optional<Duration> periodOf(String where, Method method) {
        org.springframework.scheduling.annotation.Schedules all =
                method.getAnnotation(org.springframework.scheduling.annotation.Schedules.class);
        Scheduled scheduled =
                all != null && all.value().length > 0 ? all.value()[0] : method.getAnnotation(Scheduled.class);
        if (scheduled == null) {
            throw new DibsStartupException(where, "is for a @Scheduled method");
        }
        if (!scheduled.cron().isEmpty()
                && read(where + " @Scheduled cron", () -> DibsScheduledTick.resolve(scheduled.cron()))
                        .equals(Scheduled.CRON_DISABLED)) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(DibsScheduledTick.periodOf(scheduled)
                .orElseThrow(() -> new DibsStartupException(where, "has a @Scheduled whose period cannot be read")));
    }

    private static <T> T read(String what, java.util.function.Supplier<T> value) {
        try {
            return value.get();
        } catch (RuntimeException e) { // an unresolvable placeholder, a typo, an unknown zone
            throw new DibsStartupException(what, "cannot be used: " + e.getMessage(), e);
        }
    }
}
