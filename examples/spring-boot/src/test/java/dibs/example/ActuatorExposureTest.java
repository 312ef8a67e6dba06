package dibs.example;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.DibsLease;
import dibs.DibsRun;
import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The example service over HTTP, as an operator or an attacker meets its actuator: its shipped
 * defaults, the `local` profile, and the force release with Spring Security present (the rule of
 * the starter's README) and absent. Against a real redis-server; the app on a real port.
 */
class ActuatorExposureTest {
    /** Spring Security is on this test's classpath: these turn it off, as in a service without it. */
    private static final String NO_SECURITY = "spring.autoconfigure.exclude="
            + "org.springframework.boot.autoconfigure.security.servlet.SecurityAutoConfiguration,"
            + "org.springframework.boot.autoconfigure.security.servlet.SecurityFilterAutoConfiguration,"
            + "org.springframework.boot.autoconfigure.security.servlet.UserDetailsServiceAutoConfiguration,"
            + "org.springframework.boot.actuate.autoconfigure.security.servlet.ManagementWebSecurityAutoConfiguration";

    private static final Pattern HOLDER_ID = Pattern.compile("\"holderId\":\"([0-9a-f]{16})\"");

    private static RedisServer redis;
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void startRedis() throws IOException {
        redis = RedisServer.launch();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    /**
     * The example app with `properties` on its command line (over application.properties, as an
     * operator's would be), on a free port.
     */
    private static ConfigurableApplicationContext start(String profiles, String... properties) {
        List<String> all = new ArrayList<>(List.of(
                "spring.data.redis.url=" + redis.uri(),
                "server.port=0",
                "demo.instance=test",
                "logging.level.root=WARN"));
        all.addAll(List.of(properties));
        return new SpringApplicationBuilder(TickApplication.class)
                .profiles(profiles.isEmpty() ? new String[0] : profiles.split(","))
                .run(all.stream().map(p -> "--" + p).toArray(String[]::new));
    }

    private static HttpResponse<String> send(
            ConfigurableApplicationContext app, String method, String path, String user, String json) throws Exception {
        String port = app.getEnvironment().getProperty("local.server.port");
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10));
        if (user != null) {
            String basic = user + ":" + SecuredActuator.PASSWORD;
            request.header(
                    "Authorization",
                    "Basic " + Base64.getEncoder().encodeToString(basic.getBytes(StandardCharsets.UTF_8)));
        }
        if (json == null) {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            request.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(json));
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String holderIdIn(String body) {
        Matcher m = HOLDER_ID.matcher(body);
        assertThat(m.find()).as("a holderId in %s", body).isTrue();
        return m.group(1);
    }

    private static String tokenOf(DibsClient client, String name) {
        return client.heldLock(name).orElseThrow().token().orElseThrow();
    }

    @Test
    void theShippedDefaultsShowNeitherHealthDetailsNorTheDibsEndpoint() throws Exception {
        try (ConfigurableApplicationContext app = start("", NO_SECURITY)) {
            assertThat(send(app, "GET", "/actuator/dibs", null, null).statusCode())
                    .isEqualTo(404);
            HttpResponse<String> health = send(app, "GET", "/actuator/health", null, null);
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).contains("\"status\":\"UP\"").doesNotContain("components", "redis");
        }
    }

    @Test
    void withSpringSecurityOnlyTheOperatorRoleForceReleasesAndNoReaderSeesAToken() throws Exception {
        try (ConfigurableApplicationContext app = start(
                "local,secured",
                "dibs.actuator.force-release=true",
                "management.endpoints.web.exposure.include=health,dibs,dibsrelease")) {
            DibsClient client = app.getBean(DibsClient.class);
            DibsLease lease = client.tryLock("stuck-export", Duration.ofMinutes(1), Duration.ZERO)
                    .orElseThrow();
            String token = tokenOf(client, "stuck-export");

            assertThat(send(app, "GET", "/actuator/dibs/stuck-export", null, null)
                            .statusCode())
                    .isEqualTo(401);
            HttpResponse<String> seen = send(app, "GET", "/actuator/dibs/stuck-export", SecuredActuator.READER, null);
            assertThat(seen.statusCode()).isEqualTo(200);
            assertThat(seen.body()).doesNotContain(token);
            assertThat(send(app, "GET", "/actuator/dibs", SecuredActuator.READER, null)
                            .body())
                    .doesNotContain(token);
            String body = "{\"holderId\":\"" + holderIdIn(seen.body()) + "\"}";

            HttpResponse<String> refused =
                    send(app, "POST", "/actuator/dibsrelease/stuck-export", SecuredActuator.READER, body);
            assertThat(refused.statusCode()).isEqualTo(403);
            assertThat(client.heldLock("stuck-export"))
                    .as("the reader's POST touched nothing")
                    .isPresent();
            // The old shape, a token in the body, is no way in either.
            assertThat(send(
                                    app,
                                    "POST",
                                    "/actuator/dibs",
                                    SecuredActuator.OPERATOR,
                                    "{\"name\":\"stuck-export\",\"token\":\"" + token + "\"}")
                            .statusCode())
                    .isIn(400, 404, 405);
            assertThat(client.heldLock("stuck-export")).isPresent();

            HttpResponse<String> released =
                    send(app, "POST", "/actuator/dibsrelease/stuck-export", SecuredActuator.OPERATOR, body);
            assertThat(released.statusCode()).isEqualTo(200);
            assertThat(released.body()).contains("\"released\":true");
            assertThat(client.heldLock("stuck-export")).isEmpty();
            assertThat(lease.release()).isFalse();
            // Newest first: the holder's own release, which found the lock no longer its, then the force.
            DibsRun forced = client.history("stuck-export", 5).get(1);
            assertThat(forced.ended()).isEqualTo("forced");
            assertThat(forced.forcedBy().orElseThrow()).startsWith("actuator:operator@");
        }
    }

    @Test
    void withoutSpringSecurityTheForceReleaseNeedsItsOwnExposureAndTheHolderAsShown() throws Exception {
        // Enabled, but exposed as the `local` profile exposes the read: no way to it.
        try (ConfigurableApplicationContext app = start("local", NO_SECURITY, "dibs.actuator.force-release=true")) {
            DibsClient client = app.getBean(DibsClient.class);
            DibsLease lease = client.tryLock("stuck-import", Duration.ofMinutes(1), Duration.ZERO)
                    .orElseThrow();
            HttpResponse<String> seen = send(app, "GET", "/actuator/dibs/stuck-import", null, null);
            assertThat(seen.statusCode()).isEqualTo(200);
            assertThat(seen.body()).doesNotContain(tokenOf(client, "stuck-import"));
            String body = "{\"holderId\":\"" + holderIdIn(seen.body()) + "\"}";
            assertThat(send(app, "POST", "/actuator/dibsrelease/stuck-import", null, body)
                            .statusCode())
                    .isEqualTo(404);
            assertThat(client.heldLock("stuck-import")).isPresent();
            lease.release();
        }
        try (ConfigurableApplicationContext app = start(
                "local",
                NO_SECURITY,
                "dibs.actuator.force-release=true",
                "management.endpoints.web.exposure.include=health,dibs,dibsrelease")) {
            DibsClient client = app.getBean(DibsClient.class);
            DibsLease first = client.tryLock("stuck-import", Duration.ofMinutes(1), Duration.ZERO)
                    .orElseThrow();
            String firstId = holderIdIn(
                    send(app, "GET", "/actuator/dibs/stuck-import", null, null).body());
            first.release();
            DibsLease second = client.tryLock("stuck-import", Duration.ofMinutes(1), Duration.ZERO)
                    .orElseThrow();
            // The holding shown before is gone: the lock taken since is not touched.
            HttpResponse<String> stale =
                    send(app, "POST", "/actuator/dibsrelease/stuck-import", null, "{\"holderId\":\"" + firstId + "\"}");
            assertThat(stale.body()).contains("\"released\":false");
            assertThat(client.heldLock("stuck-import")).isPresent();
            String secondId = holderIdIn(
                    send(app, "GET", "/actuator/dibs/stuck-import", null, null).body());
            HttpResponse<String> released = send(
                    app, "POST", "/actuator/dibsrelease/stuck-import", null, "{\"holderId\":\"" + secondId + "\"}");
            assertThat(released.body()).contains("\"released\":true");
            assertThat(second.release()).isFalse();
            assertThat(client.history("stuck-import", 5).get(1).forcedBy().orElseThrow())
                    .startsWith("actuator@");
        }
    }
}
