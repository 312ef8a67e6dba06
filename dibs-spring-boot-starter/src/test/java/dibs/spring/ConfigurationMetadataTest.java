package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The IDE metadata names every property the starter reads of its own. */
class ConfigurationMetadataTest {
    @Test
    void everyOwnPropertyIsDescribed() throws IOException {
        String json;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("META-INF/spring-configuration-metadata.json").isNotNull();
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        for (String name : List.of("dibs.enabled", "dibs.key-prefix", "dibs.keep-alive", "dibs.at-least",
                "dibs.metrics.enabled", "management.health.dibs.enabled")) {
            assertThat(json).contains("\"name\": \"" + name + "\"");
        }
    }
}
