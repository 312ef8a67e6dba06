package bench;

import java.nio.file.Path;
import java.nio.file.Paths;

/** Command-line options; the defaults keep a run under 5 minutes on a 2-core VM. */
final class BenchOptions {
    String host = "127.0.0.1";
    int port = -1;
    int rounds = 2;
    long windowMs = 2_000;
    long warmupMs = 500;
    int samples = 20_000;
    long leakCalls = 1_000_000;
    boolean leakAll;
    String pinning = "not pinned";
    String jdk25;
    Path out = Paths.get("bench/results");

    static BenchOptions parse(String[] args) {
        BenchOptions o = new BenchOptions();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--leak-all")) {
                o.leakAll = true;
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(a + " needs a value");
            }
            String v = args[++i];
            switch (a) {
                case "--host":
                    o.host = v;
                    break;
                case "--port":
                    o.port = Integer.parseInt(v);
                    break;
                case "--rounds":
                    o.rounds = Integer.parseInt(v);
                    break;
                case "--window-ms":
                    o.windowMs = Long.parseLong(v);
                    break;
                case "--warmup-ms":
                    o.warmupMs = Long.parseLong(v);
                    break;
                case "--samples":
                    o.samples = Integer.parseInt(v);
                    break;
                case "--leak-calls":
                    o.leakCalls = Long.parseLong(v);
                    break;
                case "--pinning":
                    o.pinning = v;
                    break;
                case "--jdk25":
                    o.jdk25 = v;
                    break;
                case "--out":
                    o.out = Paths.get(v);
                    break;
                default:
                    throw new IllegalArgumentException("unknown option " + a);
            }
        }
        if (o.port <= 0) {
            throw new IllegalArgumentException("--port is required: the redis-server that bench/run.sh started");
        }
        if (o.rounds < 1 || o.leakCalls <= Fresh.RSS_MARK) {
            throw new IllegalArgumentException("need --rounds >= 1 and --leak-calls > " + Fresh.RSS_MARK);
        }
        return o;
    }
}
