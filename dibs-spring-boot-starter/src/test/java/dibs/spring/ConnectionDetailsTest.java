package dibs.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dibs.DibsClient;
import dibs.testsupport.RedisServer;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

/**
 * The application's own RedisConnectionDetails bean ({@code @ServiceConnection} and Testcontainers
 * make one) wins over spring.data.redis.*: standalone, Sentinel and Cluster, as it gives them,
 * against real redis-servers. The same test on both Boots: the bean is Boot 3's
 * {@code RedisConnectionDetails} or Boot 4's {@code DataRedisConnectionDetails}, whichever this
 * run has.
 */
class ConnectionDetailsTest {
    private static final String PASSWORD = "details-Pw-9";
    private static final boolean BOOT3 =
            ClassUtils.isPresent("org.springframework.boot.autoconfigure.data.redis.RedisConnectionDetails", null);

    @RegisterExtension
    static final RedisServer secured = RedisServer.perTestClass("--requirepass", PASSWORD);

    /** What the bean of the running test gives: one of standalone, sentinel or cluster. */
    record Given(
            String password,
            String host,
            int port,
            int database,
            String master,
            List<Integer> sentinels,
            List<Integer> cluster) {}

    private static volatile Given given;

    private static Class<?> detailsBean() {
        return BOOT3 ? Boot3Details.class : Boot4Details.class;
    }

    @Test
    void standaloneDetailsWinOverTheProperties() {
        given = new Given(PASSWORD, "127.0.0.1", secured.port(), 2, null, null, null);
        Contexts.runner()
                .withUserConfiguration(detailsBean())
                // Where nothing listens, and the wrong password: the bean must be what is used.
                .withPropertyValues("spring.data.redis.port=1", "spring.data.redis.password=wrong")
                .run(context -> {
                    DibsClient client = context.getBean(DibsClient.class);
                    assertThat(DibsAutoConfigurationTest.existsWhileRunning(client, secured, 2, "dibs:job"))
                            .isEqualTo("1");
                    assertThat(context.getBean(DibsTarget.class).address()).isEqualTo("127.0.0.1:" + secured.port());
                });
    }

    @Test
    void sentinelDetailsFindTheMaster() throws Exception {
        try (RedisServer master = RedisServer.launch();
                SentinelProcess sentinel = SentinelProcess.start(master.port())) {
            given = new Given(null, null, 0, 0, "mymaster", List.of(sentinel.port()), null);
            // A master without replicas: durable acquire's default would wait for one in vain.
            Contexts.runner()
                    .withUserConfiguration(detailsBean())
                    .withPropertyValues("dibs.durable=off")
                    .run(context -> assertThat(DibsAutoConfigurationTest.existsWhileRunning(
                                    context.getBean(DibsClient.class), master, 0, "dibs:job"))
                            .isEqualTo("1"));
        }
    }

    @Test
    void clusterDetailsReachTheCluster() throws Exception {
        try (RedisServer node = ClusterNode.start()) {
            given = new Given(null, null, 0, 0, null, null, List.of(node.port()));
            Contexts.runner()
                    .withUserConfiguration(detailsBean())
                    .run(context -> assertThat(DibsAutoConfigurationTest.existsWhileRunning(
                                    context.getBean(DibsClient.class), node, 0, "dibs:job"))
                            .isEqualTo("1"));
        }
    }

    @Test
    void aValueDibsRefusesNamesTheDetailsAndNeverThePassword() {
        given = new Given(PASSWORD, "127.0.0.1", 70000, 0, null, null, null);
        Contexts.runner().withUserConfiguration(detailsBean()).run(context -> {
            assertThat(context).hasFailed();
            DibsStartupException e = Contexts.startupException(context.getStartupFailure());
            assertThat(e.property()).isEqualTo("RedisConnectionDetails.port");
            assertThat(e.getCause()).isInstanceOf(dibs.DibsArgumentException.class);
            assertThat(Contexts.messages(context.getStartupFailure())).doesNotContain(PASSWORD);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Boot3Details {
        @Bean
        RedisConnectionDetails redisConnectionDetails() {
            Given g = given;
            return new RedisConnectionDetails() {
                @Override
                public String getPassword() {
                    return g.password();
                }

                @Override
                public Standalone getStandalone() {
                    return Standalone.of(g.host(), g.port(), g.database());
                }

                @Override
                public Sentinel getSentinel() {
                    return g.master() == null
                            ? null
                            : new Sentinel() {
                                @Override
                                public int getDatabase() {
                                    return g.database();
                                }

                                @Override
                                public String getMaster() {
                                    return g.master();
                                }

                                @Override
                                public List<Node> getNodes() {
                                    return g.sentinels().stream()
                                            .map(p -> new Node("127.0.0.1", p))
                                            .toList();
                                }

                                @Override
                                public String getUsername() {
                                    return null;
                                }

                                @Override
                                public String getPassword() {
                                    return null;
                                }
                            };
                }

                @Override
                public Cluster getCluster() {
                    return g.cluster() == null
                            ? null
                            : () -> g.cluster().stream()
                                    .map(p -> new Node("127.0.0.1", p))
                                    .toList();
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Boot4Details {
        @Bean
        DataRedisConnectionDetails redisConnectionDetails() {
            Given g = given;
            return new DataRedisConnectionDetails() {
                @Override
                public String getPassword() {
                    return g.password();
                }

                @Override
                public Standalone getStandalone() {
                    return Standalone.of(g.host(), g.port(), g.database());
                }

                @Override
                public Sentinel getSentinel() {
                    return g.master() == null
                            ? null
                            : new Sentinel() {
                                @Override
                                public int getDatabase() {
                                    return g.database();
                                }

                                @Override
                                public String getMaster() {
                                    return g.master();
                                }

                                @Override
                                public List<Node> getNodes() {
                                    return g.sentinels().stream()
                                            .map(p -> new Node("127.0.0.1", p))
                                            .toList();
                                }

                                @Override
                                public String getUsername() {
                                    return null;
                                }

                                @Override
                                public String getPassword() {
                                    return null;
                                }
                            };
                }

                @Override
                public Cluster getCluster() {
                    return g.cluster() == null
                            ? null
                            : () -> g.cluster().stream()
                                    .map(p -> new Node("127.0.0.1", p))
                                    .toList();
                }
            };
        }
    }
}
