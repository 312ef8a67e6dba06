package dibs.robustness;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * The harness's ledger: every event is one {@code GET <ledger-url>/e?<query>}, which the ledger
 * stamps with its own clock (the one clock on the machine that no fault shifts). The answer is
 * {@code accepted} or {@code refused} for a {@code write} (the fenced store's verdict) and
 * {@code ok} otherwise.
 *
 * <p>A ledger that fails never fails the worker: the event is reported as {@code LEDGER-ERROR} on
 * stdout and the caller goes on, since an exception here would reach dibs's call and change the
 * very outcome the harness audits. Thread-safe.
 */
final class Ledger {
    /** Connect and read timeout each: long enough for a busy ledger, short enough not to stall a task. */
    private static final int TIMEOUT_MS = 2000;

    private final String base;

    /** @param url the ledger's base URL, such as {@code http://127.0.0.1:8123} */
    Ledger(String url) {
        String trimmed = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        this.base = trimmed + "/e?";
    }

    /**
     * Sends one event.
     *
     * @param params names and values, alternately; a null value leaves its name out
     * @return the ledger's answer, or the empty string when it could not be had
     */
    String send(String... params) {
        StringBuilder query = new StringBuilder();
        for (int i = 0; i + 1 < params.length; i += 2) {
            if (params[i + 1] == null) {
                continue;
            }
            if (query.length() > 0) {
                query.append('&');
            }
            query.append(params[i]).append('=').append(URLEncoder.encode(params[i + 1], StandardCharsets.UTF_8));
        }
        try {
            HttpURLConnection http = (HttpURLConnection) new URL(base + query).openConnection();
            http.setConnectTimeout(TIMEOUT_MS);
            http.setReadTimeout(TIMEOUT_MS);
            int status = http.getResponseCode();
            if (status != 200) {
                http.disconnect();
                Out.line("LEDGER-ERROR HTTP " + status + " for " + query);
                return "";
            }
            // Read to the end, so that the connection goes back to the JDK's keep-alive cache.
            try (InputStream in = http.getInputStream()) {
                ByteArrayOutputStream body = new ByteArrayOutputStream();
                in.transferTo(body);
                return body.toString(StandardCharsets.UTF_8).trim();
            }
        } catch (IOException | RuntimeException e) {
            Out.line("LEDGER-ERROR " + e.getClass().getSimpleName() + ": "
                    + String.valueOf(e.getMessage()).replace('\n', ' ') + " for " + query);
            return "";
        }
    }
}
