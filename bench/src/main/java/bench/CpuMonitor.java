package bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * How much CPU other processes took while something was measured: the machine's busy time
 * (/proc/stat) less this JVM's, its reaped children's (redis-benchmark, the fresh JVMs) and the
 * redis-server's (/proc/PID/stat). On a shared 2-core machine a build elsewhere can halve a
 * figure; {@link Bench} measures such a point again.
 */
final class CpuMonitor {
    private final long redisPid;

    CpuMonitor(long redisPid) {
        this.redisPid = redisPid;
    }

    /** A reading of the counters, in clock ticks. */
    static final class Reading {
        final long machineTotal;
        final long machineBusy;
        final long ours;

        Reading(long machineTotal, long machineBusy, long ours) {
            this.machineTotal = machineTotal;
            this.machineBusy = machineBusy;
            this.ours = ours;
        }
    }

    Reading read() {
        try {
            // cpu  user nice system idle iowait irq softirq steal [guest guest_nice, inside user]
            String[] cpu =
                    Files.readAllLines(Paths.get("/proc/stat")).get(0).trim().split("\\s+");
            long total = 0;
            for (int i = 1; i <= 8 && i < cpu.length; i++) {
                total += Long.parseLong(cpu[i]);
            }
            long idle = Long.parseLong(cpu[4]) + Long.parseLong(cpu[5]);
            return new Reading(
                    total, total - idle, processTicks("self", true) + processTicks(Long.toString(redisPid), false));
        } catch (IOException | RuntimeException e) {
            return new Reading(0, 0, 0);
        }
    }

    /** The share of the whole machine (0 to 1) that other processes used between two readings. */
    static double othersShare(Reading from, Reading to) {
        long total = to.machineTotal - from.machineTotal;
        if (total <= 0) {
            return 0;
        }
        long others = (to.machineBusy - from.machineBusy) - (to.ours - from.ours);
        return Math.max(0, others) / (double) total;
    }

    /** utime + stime (and the reaped children's, when asked) of a process, 0 if it is gone. */
    private static long processTicks(String pid, boolean withChildren) {
        try {
            String stat = Files.readString(Paths.get("/proc", pid, "stat"));
            // Fields after the command name, which may itself hold spaces: field 3 is at index 0.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
            if (withChildren) {
                ticks += Long.parseLong(f[13]) + Long.parseLong(f[14]);
            }
            return ticks;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
