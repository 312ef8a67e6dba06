package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.SchedulingConfigurer;
import org.springframework.scheduling.config.ScheduledTaskRegistrar;

/**
 * Each locked call is an Observation, and so a span (issue 33, 3): with the OpenTelemetry SDK's
 * in-memory exporter behind Micrometer Tracing's OTel bridge, a {@code @Scheduled} cron method
 * whose scheduler is observed runs its tick ({@code executeOnce}) and tries it again (skipped: the
 * tick is done), then runs a task that throws. Each call's span has the meters' tags ({@code lock}, {@code outcome}) and the
 * tick; the run's has its fencing token; both are children of the scheduled task's span, and the
 * task's own span inside the run is the lock span's child.
 */
class ObservationSpansTest {
    @RegisterExtension
    static final RedisServer redis = RedisServer.perTestClass();

    static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();
    static final CountDownLatch FIRED = new CountDownLatch(1);
    static final AtomicReference<String> TICK = new AtomicReference<>();

    static class Report {
        private final DibsClient dibs;
        private final ObservationRegistry observations;

        Report(DibsClient dibs, ObservationRegistry observations) {
            this.dibs = dibs;
            this.observations = observations;
        }

        @Scheduled(cron = "* * * * * *", zone = "UTC")
        void nightly() {
            if (FIRED.getCount() == 0) {
                return;
            }
            String tick = DibsScheduledTick.current().orElseThrow();
            TICK.set(tick);
            dibs.executeOnce(
                    "traced-report",
                    tick,
                    Duration.ofSeconds(30),
                    () -> io.micrometer.observation.Observation.createNotStarted("report.build", observations)
                            .observe(() -> {}));
            dibs.executeOnce("traced-report", tick, Duration.ofSeconds(30), () -> {});
            try {
                dibs.executeOnce("traced-export", tick, Duration.ofSeconds(30), () -> {
                    throw new IllegalStateException("disk full");
                });
            } catch (IllegalStateException expected) {
                // the task's own exception, as the caller gets it
            }
            FIRED.countDown();
        }
    }

    @Configuration(proxyBeanMethods = true)
    @EnableScheduling
    static class Traced implements SchedulingConfigurer {
        @Bean
        ObservationRegistry observationRegistry() {
            SdkTracerProvider provider = SdkTracerProvider.builder()
                    .addSpanProcessor(SimpleSpanProcessor.create(SPANS))
                    .build();
            OpenTelemetrySdk sdk =
                    OpenTelemetrySdk.builder().setTracerProvider(provider).build();
            OtelCurrentTraceContext context = new OtelCurrentTraceContext();
            OtelTracer tracer = new OtelTracer(
                    sdk.getTracer("dibs-test"),
                    context,
                    event -> {},
                    new OtelBaggageManager(context, List.of(), List.of()));
            ObservationRegistry registry = ObservationRegistry.create();
            registry.observationConfig().observationHandler(new DefaultTracingObservationHandler(tracer));
            return registry;
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        Report report(DibsClient dibs, ObservationRegistry observations) {
            return new Report(dibs, observations);
        }

        @Override
        public void configureTasks(ScheduledTaskRegistrar registrar) {
            registrar.setObservationRegistry(observationRegistry());
        }
    }

    private static String attribute(SpanData span, String key) {
        return span.getAttributes().get(AttributeKey.stringKey(key));
    }

    @Test
    void aRunAndASkipAreSpansInsideTheScheduledTasksSpan() {
        Contexts.runner()
                .withUserConfiguration(Traced.class)
                .withPropertyValues("spring.data.redis.port=" + redis.port())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(FIRED.await(10, TimeUnit.SECONDS))
                            .as("the cron fired")
                            .isTrue();
                    // The scheduled task's span ends after the method returns.
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                    while (SPANS.getFinishedSpanItems().size() < 5 && System.nanoTime() < deadline) {
                        Thread.sleep(20);
                    }
                    List<SpanData> spans = SPANS.getFinishedSpanItems();
                    spans.forEach(s -> System.out.println("span: " + s.getName() + " id=" + s.getSpanId() + " parent="
                            + s.getParentSpanId() + " " + s.getAttributes()));
                    List<SpanData> locks = spans.stream()
                            .filter(s -> s.getName().equals("dibs traced-report"))
                            .toList();
                    assertThat(locks).hasSize(2);
                    SpanData ran = locks.stream()
                            .filter(s -> "ran".equals(attribute(s, "outcome")))
                            .findFirst()
                            .orElseThrow();
                    SpanData skipped = locks.stream()
                            .filter(s -> "skipped".equals(attribute(s, "outcome")))
                            .findFirst()
                            .orElseThrow();
                    for (SpanData lock : locks) {
                        assertThat(attribute(lock, "lock")).isEqualTo("traced-report");
                        assertThat(attribute(lock, "dibs.tick")).isEqualTo(TICK.get());
                        assertThat(attribute(lock, "catch.up")).isEqualTo("false");
                    }
                    assertThat(Long.parseLong(attribute(ran, "dibs.fencing.token")))
                            .isPositive();
                    assertThat(attribute(skipped, "dibs.fencing.token")).isNull();
                    // Both inside the scheduled task's span: the one span with no parent.
                    SpanData task = spans.stream()
                            .filter(s -> !s.getParentSpanContext().isValid())
                            .findFirst()
                            .orElseThrow();
                    assertThat(task.getName()).doesNotStartWith("dibs ");
                    assertThat(locks).allMatch(s -> s.getParentSpanId().equals(task.getSpanId()));
                    // A task that threw: its span says failed, with the task's exception.
                    SpanData failed = spans.stream()
                            .filter(s -> s.getName().equals("dibs traced-export"))
                            .findFirst()
                            .orElseThrow();
                    assertThat(attribute(failed, "outcome")).isEqualTo("failed");
                    assertThat(failed.getStatus().getStatusCode())
                            .isEqualTo(io.opentelemetry.api.trace.StatusCode.ERROR);
                    assertThat(failed.getParentSpanId()).isEqualTo(task.getSpanId());
                    // And the task's own work inside the run's span.
                    SpanData build = spans.stream()
                            .filter(s -> s.getName().equals("report.build"))
                            .findFirst()
                            .orElseThrow();
                    assertThat(build.getParentSpanId()).isEqualTo(ran.getSpanId());
                });
    }
}
