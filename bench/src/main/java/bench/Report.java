package bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** Writes results.md (figures, ratios, targets) and the CSVs that bench/plot.py draws. */
final class Report {
    private static final String DIBS = DibsContender.NAME;
    private static final String SL_JEDIS = ShedLockContender.JEDIS;
    private static final String SL_LETTUCE = ShedLockContender.LETTUCE;
    private static final String RAW = RawJedisContender.NAME;
    private static final String REDISSON = RedissonContender.NAME;

    private final Results r;

    Report(Results results) {
        this.r = results;
    }

    /** Writes every file into {@code dir}; returns the Markdown. */
    String write(Path dir) throws IOException {
        Files.createDirectories(dir);
        String md = markdown();
        Files.writeString(dir.resolve("results.md"), md);
        Files.writeString(dir.resolve("latency-cdf.csv"), cdfCsv());
        Files.writeString(dir.resolve("throughput.csv"), throughputCsv());
        Files.writeString(dir.resolve("reference.csv"), referenceCsv());
        Files.writeString(dir.resolve("rounds.csv"), roundsCsv());
        return md;
    }

    private String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("# dibs side by side with ShedLock, Redisson and the raw Redis limit\n\n");
        md.append("Produced by `bash bench/run.sh`. One redis-server, every contender in the same run.\n\n");
        r.setup.forEach(
                (k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("- contenders: **dibs** `Dibs.execute(uri, name, 10, 0, task)` (Java, JNI, Rust), with its"
                + " defaults (the run history, the fencing token); **dibs (history off)** the same with the conn"
                + " key `history` false, to show what recording each run costs;"
                + " **ShedLock-Jedis** `DefaultLockingTaskExecutor`, ShedLock's Redis lock logic"
                + " (shedlock-support-redis) on a JedisPool sized for the thread count, safeUpdate on;"
                + " **ShedLock-Lettuce** `DefaultLockingTaskExecutor` with the Spring Data Redis"
                + " `RedisLockProvider` on a `LettuceConnectionFactory`, safeUpdate on; **raw Jedis** one"
                + " pooled connection per thread doing only `SET NX PX` and `EVALSHA` of dibs's release"
                + " script, the floor for a two-round-trip cycle; **Redisson** `RLock lock ="
                + " redisson.getLock(name); lock.tryLock(0, 10 s)`, the no-op task, `lock.unlock()` on a"
                + " single-server client (connection pool sized for the thread count)\n");
        md.append("- Redisson's lock is not the same protocol, so its column compares the call a service would make"
                + " for the same job, not the same commands. Its lock is a hash (field `<client id>:<thread id>`"
                + " holding a re-entry count), taken by one script (EXISTS, HEXISTS, HINCRBY, PEXPIRE; PTTL when"
                + " held); its unlock is a second script (GET of an unlock-latch key, HEXISTS, HINCRBY -1, DEL,"
                + " PUBLISH to the lock's pub/sub channel for waiters, SET of the latch key), then a DEL of the latch"
                + " key that the caller does not wait for. Both scripts go by EVALSHA (SCRIPT LOAD on a miss),"
                + " every call through Netty's event loop and back to the caller's thread. So a won cycle is two round trips for the caller"
                + " plus one more command for the server, a skip one round trip. A lease time is given, so no"
                + " watchdog runs; a wait time of 0 means a skipped call returns at once and never subscribes:"
                + " re-entrancy, the watchdog and waiting through pub/sub, what the hash and the PUBLISH are"
                + " for, are not exercised\n");
        md.append("- ratios are dibs / the other: below 1 is better for dibs on latencies, above 1 on rates\n\n");

        md.append("## Figures\n\n");
        md.append("| workload | figure | dibs | dibs (history off) | ShedLock-Jedis | ShedLock-Lettuce | raw Jedis"
                + " | Redisson | dibs / ShedLock-Jedis | dibs / ShedLock-Lettuce | dibs / raw | dibs / Redisson |\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        row(md, "(a) uncontended, 1 thread", "cycle p50, µs", c -> Results.median(r.cycle, c, Samples::p50), 1);
        row(md, "", "cycle p99, µs", c -> Results.median(r.cycle, c, Samples::p99), 1);
        row(
                md,
                "skip path, 1 thread, lock held by another",
                "p50, µs",
                c -> Results.median(r.heldSkip, c, Samples::p50),
                1);
        row(md, "", "p99, µs", c -> Results.median(r.heldSkip, c, Samples::p99), 1);
        row(
                md,
                "redis-server CPU per call, 1 thread",
                "(a) cycle, µs",
                c -> Results.median(r.cycleServerUs, c, Double::doubleValue),
                1);
        row(md, "", "skip, µs", c -> Results.median(r.skipServerUs, c, Double::doubleValue), 1);
        boolean first = true;
        for (int threads : Results.THREADS) {
            row(
                    md,
                    first ? "(b) throughput, distinct lock names" : "",
                    threads + (threads == 1 ? " thread" : " threads") + ", cycles/s",
                    c -> r.throughput(threads, c),
                    0);
            first = false;
        }
        row(
                md,
                "(c) contended, " + Results.CONTENDED_THREADS + " threads, one lock name",
                "skipped calls p50, µs",
                c -> Results.median(r.contended, c, w -> w.skips.p50()),
                1);
        row(md, "", "skipped calls p99, µs", c -> Results.median(r.contended, c, w -> w.skips.p99()), 1);
        row(md, "", "calls/s", c -> Results.median(r.contended, c, w -> w.callsPerSec), 0);
        row(
                md,
                "",
                "share of calls that won, %",
                c -> Results.median(r.contended, c, w -> 100.0 * w.wins / w.calls),
                2,
                false);
        row(
                md,
                "(d) leak check, fresh JVM",
                String.format("RSS growth %,dk → %,dk cycles, MB", Fresh.RSS_MARK / 1000, r.leakCalls / 1000),
                r::rssGrowthMb,
                1,
                false);
        if (!r.leak.containsKey(SL_JEDIS)) {
            md.append(
                    "| | (ShedLock providers: `bash bench/run.sh --leak-all`, about a minute more) | | | | | | | | | | |\n");
        }
        row(md, "(e) fresh JVM", "setup + first call, ms", c -> Results.median(r.firstCall, c, f -> f[0]), 1);
        row(md, "", "second call, µs", c -> Results.median(r.firstCall, c, f -> f[1]), 0);
        row(md, "", "whole JVM run (start to exit), ms", c -> Results.median(r.firstCall, c, f -> f[2]), 0);
        if (!r.virtual.isEmpty()) {
            row(
                    md,
                    "(f) " + VirtualPin.THREADS + " virtual threads, 2 carriers, task sleeps " + VirtualPin.SLEEP_MS
                            + " ms",
                    "wall time with dibs, ms",
                    c -> dibsOnly(c, f -> f[0]),
                    0,
                    false);
            row(md, "", "without dibs (the sleeps alone), ms", c -> dibsOnly(c, f -> f[1]), 0, false);
            row(md, "", "with / without dibs", c -> dibsOnly(c, f -> f[0] / f[1]), 2, false);
        }

        md.append("\n## redis-benchmark, same server, same pinning\n\n");
        md.append("`redis-benchmark -t set -n " + RedisBenchmark.REQUESTS + " -c <clients> -q --csv`: one SET per"
                + " request from a C client. A lock cycle is two round trips, so ½ its rate and 2× its latency"
                + " are a reference for a cycle (at several clients its single client thread, not the server,"
                + " can be the limit).\n\n");
        md.append("| clients | SET req/s | SET p50, µs | SET p99, µs | ½ req/s | 2 × p50, µs | dibs cycles/s at as many"
                + " threads |\n|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int clients : r.redisBenchmark.keySet()) {
            double rps = r.redisBenchmark(clients, x -> x.rps);
            double p50 = r.redisBenchmark(clients, x -> x.p50);
            md.append(String.format(
                    Locale.ROOT,
                    "| %d | %s | %s | %s | %s | %s | %s |\n",
                    clients,
                    num(rps, 0),
                    num(p50, 0),
                    num(r.redisBenchmark(clients, x -> x.p99), 0),
                    num(rps / 2, 0),
                    num(2 * p50, 0),
                    num(r.throughput(clients, DIBS), 0)));
        }

        md.append("\n## Targets\n\n| target | measured | required | verdict |\n|---|---|---|---|\n");
        double dibsP50 = Results.median(r.cycle, DIBS, Samples::p50);
        double rawP50 = Results.median(r.cycle, RAW, Samples::p50);
        target(
                md,
                "uncontended cycle p50 ≤ 1.15 × the raw two-round-trip cycle",
                String.format(Locale.ROOT, "%.1f / %.1f µs", dibsP50, rawP50),
                dibsP50 / rawP50,
                1.15,
                true);
        double dibs16 = r.throughput(16, DIBS);
        double slJedis16 = r.throughput(16, SL_JEDIS);
        double slLettuce16 = r.throughput(16, SL_LETTUCE);
        String best = slJedis16 >= slLettuce16 || Double.isNaN(slLettuce16) ? SL_JEDIS : SL_LETTUCE;
        double best16 = Math.max(slJedis16, slLettuce16);
        target(
                md,
                "throughput at 16 threads ≥ 1.3 × the best ShedLock provider",
                String.format(Locale.ROOT, "%,.0f / %,.0f cycles/s (%s)", dibs16, best16, best),
                dibs16 / best16,
                1.3,
                false);
        double dibsSkip = Results.median(r.heldSkip, DIBS, Samples::p50);
        double rawSkip = Results.median(r.heldSkip, RAW, Samples::p50);
        target(
                md,
                "skip path p50 ≤ 1.15 × one raw SET NX round trip on a held key, 1 thread",
                String.format(Locale.ROOT, "%.1f / %.1f µs", dibsSkip, rawSkip),
                dibsSkip / rawSkip,
                1.15,
                true);
        double dibsCont = Results.median(r.contended, DIBS, w -> w.skips.p50());
        double rawCont = Results.median(r.contended, RAW, w -> w.skips.p50());
        target(
                md,
                "skip path p50 ≤ 1.15 × the raw skip path, " + Results.CONTENDED_THREADS + " threads on one name",
                String.format(Locale.ROOT, "%.1f / %.1f µs", dibsCont, rawCont),
                dibsCont / rawCont,
                1.15,
                true);
        double growth = r.rssGrowthMb(DIBS);
        md.append(String.format(
                Locale.ROOT,
                "| RSS growth < 10 MB from %,dk to %,dk dibs cycles | %s MB | < 10 MB | %s |\n",
                Fresh.RSS_MARK / 1000,
                r.leakCalls / 1000,
                num(growth, 1),
                Double.isNaN(growth)
                        ? "not measured"
                        : growth < 10 ? "**met**" : "**missed** by " + num(growth - 10, 1) + " MB"));
        return md.toString();
    }

    private void row(StringBuilder md, String workload, String figure, ToDoubleFunction<String> value, int decimals) {
        row(md, workload, figure, value, decimals, true);
    }

    private void row(
            StringBuilder md,
            String workload,
            String figure,
            ToDoubleFunction<String> value,
            int decimals,
            boolean ratios) {
        double dibs = value.applyAsDouble(DIBS);
        md.append("| ").append(workload).append(" | ").append(figure);
        for (String c : Contender.NAMES) {
            md.append(" | ").append(num(value.applyAsDouble(c), decimals));
        }
        for (String c : List.of(SL_JEDIS, SL_LETTUCE, RAW, REDISSON)) {
            md.append(" | ").append(ratios ? ratio(dibs / value.applyAsDouble(c)) : "");
        }
        md.append(" |\n");
    }

    /** A figure of (f), measured for dibs only: the median over rounds, NaN for the other contenders. */
    private double dibsOnly(String contender, ToDoubleFunction<double[]> figure) {
        if (!DIBS.equals(contender)) {
            return Double.NaN;
        }
        return Samples.median(r.virtual.stream().mapToDouble(figure).toArray());
    }

    private static void target(
            StringBuilder md, String what, String measured, double ratio, double bound, boolean atMost) {
        String verdict;
        if (Double.isNaN(ratio)) {
            verdict = "not measured";
        } else if (atMost ? ratio <= bound : ratio >= bound) {
            verdict = "**met**";
        } else {
            // How far off, as a share of the bound.
            verdict = String.format(Locale.ROOT, "**missed** by %.1f%%", 100 * Math.abs(ratio / bound - 1));
        }
        md.append(String.format(
                Locale.ROOT,
                "| %s | %s = %s | %s %.2f× | %s |\n",
                what,
                measured,
                ratio(ratio),
                atMost ? "≤" : "≥",
                bound,
                verdict));
    }

    private static String num(double v, int decimals) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "—" : String.format(Locale.ROOT, "%,." + decimals + "f", v);
    }

    private static String ratio(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "—" : String.format(Locale.ROOT, "%.2f×", v);
    }

    /** (a)'s cycle latencies, all rounds pooled, at every 0.1 percentile and a few in the tail. */
    private String cdfCsv() {
        StringBuilder csv = new StringBuilder("contender,quantile,micros\n");
        for (Map.Entry<String, List<Samples>> e : r.cycle.entrySet()) {
            Samples all = e.getValue().get(0);
            for (Samples s : e.getValue().subList(1, e.getValue().size())) {
                all = all.merge(s);
            }
            List<Double> qs = new ArrayList<>();
            for (int i = 1; i <= 999; i++) {
                qs.add(i / 1000.0);
            }
            qs.addAll(List.of(0.9995, 0.9999));
            for (double q : qs) {
                csv.append(String.format(Locale.ROOT, "%s,%.4f,%.2f\n", e.getKey(), q, all.micros(q)));
            }
        }
        return csv.toString();
    }

    private String throughputCsv() {
        StringBuilder csv = new StringBuilder("contender,threads,median,min,max\n");
        r.throughput.forEach((threads, byContender) -> byContender.forEach((c, rounds) -> {
            double[] v = rounds.stream().mapToDouble(Double::doubleValue).toArray();
            csv.append(String.format(
                    Locale.ROOT,
                    "%s,%d,%.0f,%.0f,%.0f\n",
                    c,
                    threads,
                    Samples.median(v),
                    java.util.Arrays.stream(v).min().orElse(Double.NaN),
                    java.util.Arrays.stream(v).max().orElse(Double.NaN)));
        }));
        return csv.toString();
    }

    /** redis-benchmark figures as lock-cycle references for the plots. */
    private String referenceCsv() {
        StringBuilder csv = new StringBuilder("name,clients,value\n");
        for (int clients : r.redisBenchmark.keySet()) {
            csv.append(String.format(
                    Locale.ROOT, "half_set_rps,%d,%.0f\n", clients, r.redisBenchmark(clients, x -> x.rps) / 2));
            csv.append(String.format(
                    Locale.ROOT, "twice_set_p50_us,%d,%.1f\n", clients, 2 * r.redisBenchmark(clients, x -> x.p50)));
        }
        return csv.toString();
    }

    /** Every round's figure, for anyone who wants the spread behind a median. */
    private String roundsCsv() {
        StringBuilder csv = new StringBuilder("workload,contender,threads,round,figure,value\n");
        perRound(csv, "a-cycle", 1, r.cycle, "p50_us", Samples::p50);
        perRound(csv, "a-cycle", 1, r.cycle, "p99_us", Samples::p99);
        perRound(csv, "held-skip", 1, r.heldSkip, "p50_us", Samples::p50);
        perRound(csv, "held-skip", 1, r.heldSkip, "p99_us", Samples::p99);
        r.throughput.forEach(
                (threads, m) -> perRound(csv, "b-throughput", threads, m, "cycles_per_s", Double::doubleValue));
        perRound(csv, "c-contended", Results.CONTENDED_THREADS, r.contended, "calls_per_s", w -> w.callsPerSec);
        perRound(csv, "c-contended", Results.CONTENDED_THREADS, r.contended, "skip_p50_us", w -> w.skips.p50());
        perRound(csv, "c-contended", Results.CONTENDED_THREADS, r.contended, "skip_p99_us", w -> w.skips.p99());
        perRound(csv, "e-first-call", 1, r.firstCall, "first_ms", f -> f[0]);
        perRound(csv, "e-first-call", 1, r.firstCall, "jvm_ms", f -> f[2]);
        for (int i = 0; i < r.virtual.size(); i++) {
            csv.append(String.format(
                    Locale.ROOT,
                    "f-virtual,dibs,%d,%d,dibs_ms,%.2f\nf-virtual,dibs,%d,%d,plain_ms,%.2f\n",
                    VirtualPin.THREADS,
                    i + 1,
                    r.virtual.get(i)[0],
                    VirtualPin.THREADS,
                    i + 1,
                    r.virtual.get(i)[1]));
        }
        r.leak.forEach((c, kb) -> csv.append(String.format(
                Locale.ROOT,
                "d-leak,%s,%d,1,rss_mark_kb,%d\n" + "d-leak,%s,%d,1,rss_end_kb,%d\n",
                c,
                Results.CONTENDED_THREADS,
                kb[0],
                c,
                Results.CONTENDED_THREADS,
                kb[1])));
        r.redisBenchmark.forEach((clients, runs) -> {
            for (int i = 0; i < runs.size(); i++) {
                csv.append(String.format(
                        Locale.ROOT, "redis-benchmark,SET,%d,%d,rps,%.0f\n", clients, i + 1, runs.get(i).rps));
            }
        });
        return csv.toString();
    }

    private static <T> void perRound(
            StringBuilder csv,
            String workload,
            int threads,
            Map<String, List<T>> map,
            String figure,
            ToDoubleFunction<T> value) {
        map.forEach((c, rounds) -> {
            for (int i = 0; i < rounds.size(); i++) {
                csv.append(String.format(
                        Locale.ROOT,
                        "%s,%s,%d,%d,%s,%.2f\n",
                        workload,
                        c,
                        threads,
                        i + 1,
                        figure,
                        value.applyAsDouble(rounds.get(i))));
            }
        });
    }
}
