package dibs.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Races several {@link TickInstance} JVMs on the same ticks and collects who ran what. Used by
 * the multi-process test and by {@link Demo}.
 */
public final class TickRace {
    /** What one race produced. */
    public static final class Result {
        public final long firstTick;
        public final int ticks;
        /** tick -> instances that printed RAN for it, in order of appearance. */
        public final Map<Long, List<String>> winners = new TreeMap<>();
        /** tick -> instances that ran it through the plain per-tick call (printed DIRECT). */
        public final Map<Long, List<String>> direct = new TreeMap<>();
        /** tick -> instances that tried it and found the lock taken (printed SKIPPED). */
        public final Map<Long, List<String>> skipped = new TreeMap<>();
        /** Every line every instance printed (stdout and stderr), prefixed with its id. */
        public final List<String> output = Collections.synchronizedList(new ArrayList<>());

        public final List<Integer> exitCodes = new ArrayList<>();

        Result(long firstTick, int ticks) {
            this.firstTick = firstTick;
            this.ticks = ticks;
            for (long t = firstTick; t < firstTick + ticks; t++) {
                winners.put(t, new ArrayList<>());
            }
        }

        public int executions() {
            return winners.values().stream().mapToInt(List::size).sum();
        }

        public long overlaps() {
            return winners.values().stream().filter(w -> w.size() > 1).count();
        }

        public long missed() {
            return winners.values().stream().filter(List::isEmpty).count();
        }
    }

    private TickRace() {}

    /**
     * Starts {@code instances} JVMs that each try every one of {@code ticks} ticks, starting
     * {@code headStartSec} seconds from now (time for the JVMs to start), and waits for them.
     */
    public static Result run(String redisUri, int instances, int ticks, int headStartSec)
            throws IOException, InterruptedException {
        return run(redisUri, instances, ticks, headStartSec, -1);
    }

    /**
     * As {@link #run(String, int, int, int)}, with schedulers that fire each tick up to
     * {@code maxSkewMs} late (see {@link TickInstance}); -1 for none.
     */
    public static Result run(String redisUri, int instances, int ticks, int headStartSec, long maxSkewMs)
            throws IOException, InterruptedException {
        long first = Instant.now().getEpochSecond() + headStartSec;
        Result result = new Result(first, ticks);
        List<Process> processes = new ArrayList<>();
        List<Thread> readers = new ArrayList<>();
        try {
            for (int i = 1; i <= instances; i++) {
                String id = "i" + i;
                List<String> cmd = new ArrayList<>();
                cmd.add(javaExecutable());
                cmd.addAll(inheritedJvmFlags());
                cmd.add("-cp");
                cmd.add(System.getProperty("java.class.path"));
                cmd.add(TickInstance.class.getName());
                cmd.add(redisUri);
                cmd.add(id);
                cmd.add(Integer.toString(ticks));
                cmd.add(Long.toString(first));
                if (maxSkewMs >= 0) {
                    cmd.add(Long.toString(maxSkewMs));
                }
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                processes.add(p);
                Thread reader = new Thread(() -> collect(p, id, result), "tick-reader-" + id);
                reader.start();
                readers.add(reader);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(headStartSec + ticks + 30L);
            for (Process p : processes) {
                long left = deadline - System.nanoTime();
                if (!p.waitFor(Math.max(left, 0), TimeUnit.NANOSECONDS)) {
                    throw new IOException("a TickInstance did not finish in time; output so far:\n"
                            + String.join("\n", result.output));
                }
                result.exitCodes.add(p.exitValue());
            }
            for (Thread r : readers) {
                r.join(5000);
            }
            return result;
        } finally {
            for (Process p : processes) {
                p.destroyForcibly();
            }
        }
    }

    private static void collect(Process p, String id, Result result) {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                result.output.add(id + ": " + line);
                String[] parts = line.split(" ");
                if (parts.length == 3
                        && (parts[0].equals("RAN") || parts[0].equals("SKIPPED") || parts[0].equals("DIRECT"))) {
                    long tick = Long.parseLong(parts[1]);
                    Map<Long, List<String>> into = parts[0].equals("RAN")
                            ? result.winners
                            : parts[0].equals("DIRECT") ? result.direct : result.skipped;
                    synchronized (result) {
                        into.computeIfAbsent(tick, t -> new ArrayList<>()).add(parts[2]);
                    }
                }
            }
        } catch (IOException e) {
            result.output.add(id + ": (read failed: " + e + ")");
        }
    }

    /**
     * The {@code java} that child JVMs run: the system property {@code dibs.test.java} where set
     * (the aarch64 JVM under qemu, which cannot exec its own bin/java), else this JVM's.
     */
    public static String javaExecutable() {
        String java = System.getProperty("dibs.test.java");
        return java != null && !java.isEmpty()
                ? java
                : Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * The flags of this JVM that the children need too: JNI checking, native access, dibs.*, and
     * how processes are launched (FORK under qemu).
     */
    public static List<String> inheritedJvmFlags() {
        List<String> flags = new ArrayList<>();
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (arg.startsWith("-Xcheck:")
                    || arg.startsWith("--enable-native-access")
                    || arg.startsWith("-Ddibs.")
                    || arg.startsWith("-Dredis.server")
                    || arg.startsWith("-Djdk.lang.Process.launchMechanism=")
                    || arg.equals("-XX:+IgnoreUnrecognizedVMOptions")) {
                flags.add(arg);
            }
        }
        if (!flags.contains("-Xcheck:jni")) {
            flags.add("-Xcheck:jni");
        }
        return flags;
    }
}
