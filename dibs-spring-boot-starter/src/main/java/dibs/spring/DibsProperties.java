package dibs.spring;

import java.time.Duration;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;

/**
 * The {@code dibs.*} properties: what Spring's Redis properties cannot say.
 *
 * <table>
 *   <caption>dibs.* properties</caption>
 *   <tr><th>property</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>dibs.enabled</td><td>true</td><td>false: no dibs bean at all</td></tr>
 *   <tr><td>dibs.key-prefix</td><td>dibs:</td><td>what every lock key starts with</td></tr>
 *   <tr><td>dibs.keep-alive</td><td>false</td><td>extend a held lock every atMost / 3 while its task runs</td></tr>
 *   <tr><td>dibs.at-least</td><td>0s</td><td>the atLeast of callers that give none (Kotlin's {@code executeSuspending})</td></tr>
 * </table>
 */
public final class DibsProperties {
    static final String PREFIX = "dibs";

    private final String keyPrefix;
    private final boolean keepAlive;
    private final Duration atLeast;

    DibsProperties(String keyPrefix, boolean keepAlive, Duration atLeast) {
        this.keyPrefix = keyPrefix;
        this.keepAlive = keepAlive;
        this.atLeast = atLeast;
    }

    static DibsProperties bind(Binder b) {
        String keyPrefix = b.bind(PREFIX + ".key-prefix", String.class).orElse(null);
        boolean keepAlive = b.bind(PREFIX + ".keep-alive", Boolean.class).orElse(false);
        Duration atLeast = b.bind(PREFIX + ".at-least", Bindable.of(Duration.class)).orElse(Duration.ZERO);
        if (atLeast.isNegative()) {
            throw new DibsStartupException(PREFIX + ".at-least", "must not be negative, got " + atLeast);
        }
        if (keyPrefix != null && keyPrefix.isEmpty()) {
            throw new DibsStartupException(PREFIX + ".key-prefix", "must not be empty");
        }
        return new DibsProperties(keyPrefix, keepAlive, atLeast);
    }

    /** @return the key prefix, or null for dibs's default ({@code dibs:}) */
    public String keyPrefix() {
        return keyPrefix;
    }

    /** @return whether the client extends held locks while their tasks run */
    public boolean keepAlive() {
        return keepAlive;
    }

    /** @return the default atLeast ({@code dibs.at-least}, 0 unless set) */
    public Duration atLeast() {
        return atLeast;
    }

    @Override
    public String toString() {
        return "DibsProperties[keyPrefix=" + (keyPrefix == null ? "dibs:" : keyPrefix) + ", keepAlive=" + keepAlive
                + ", atLeast=" + atLeast + "]";
    }
}
