package dibs.spring;

import dibs.testsupport.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A one-node Redis Cluster (all 16384 slots on one master): enough to test the cluster path. */
final class ClusterNode {
    private ClusterNode() {}

    static RedisServer start() throws IOException, InterruptedException {
        Path conf = Files.createTempFile("dibs-cluster-", ".conf");
        Files.delete(conf); // redis-server writes it; an empty file would not parse
        conf.toFile().deleteOnExit();
        RedisServer node = RedisServer.launch("--cluster-enabled", "yes", "--cluster-config-file", conf.toString());
        String added = node.command("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
        if (!added.equals("OK")) {
            node.close();
            throw new IOException("CLUSTER ADDSLOTSRANGE: " + added);
        }
        for (int i = 0; i < 200; i++) {
            if (node.command("CLUSTER", "INFO").contains("cluster_state:ok")) {
                return node;
            }
            Thread.sleep(50);
        }
        node.close();
        throw new IOException("the one-node cluster did not reach cluster_state:ok");
    }
}
