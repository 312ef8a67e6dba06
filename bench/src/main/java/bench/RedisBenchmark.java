package bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * {@code redis-benchmark -t set -n N -c C -q --csv}: one SET per request from a C client, the
 * reference for one round trip. It inherits this JVM's CPU pinning.
 */
final class RedisBenchmark {
    static final int REQUESTS = 100_000;

    /** One run: requests per second and latency percentiles in µs. */
    static final class Result {
        final int clients;
        final double rps;
        final double p50;
        final double p99;

        Result(int clients, double rps, double p50, double p99) {
            this.clients = clients;
            this.rps = rps;
            this.p50 = p50;
            this.p99 = p99;
        }
    }

    private RedisBenchmark() {}

    static Result run(String host, int port, int clients) throws IOException, InterruptedException {
        List<String> command = List.of(
                "redis-benchmark",
                "-h",
                host,
                "-p",
                Integer.toString(port),
                "-t",
                "set",
                "-n",
                Integer.toString(REQUESTS),
                "-c",
                Integer.toString(clients),
                "-q",
                "--csv");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IOException(String.join(" ", command) + " failed:\n" + out);
        }
        return parse(clients, out);
    }

    /**
     * redis-benchmark 7.x prints a header line, then
     * {@code "SET","rps","avg","min","p50","p95","p99","max"} with latencies in ms. Older
     * versions print only {@code "SET","rps"}: then the latencies are NaN.
     */
    static Result parse(int clients, String csv) throws IOException {
        for (String line : csv.split("\n")) {
            if (!line.startsWith("\"SET\"")) {
                continue;
            }
            String[] f = line.replace("\"", "").trim().split(",");
            double rps = Double.parseDouble(f[1]);
            double p50 = f.length >= 7 ? Double.parseDouble(f[4]) * 1e3 : Double.NaN;
            double p99 = f.length >= 7 ? Double.parseDouble(f[6]) * 1e3 : Double.NaN;
            return new Result(clients, rps, p50, p99);
        }
        throw new IOException("no SET line in redis-benchmark output:\n" + csv);
    }
}
