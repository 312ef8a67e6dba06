package dibs.spring;

/**
 * Where the auto-configured client's Redis is, as shown by the health indicator: host and port,
 * Sentinels or cluster nodes, never credentials.
 *
 * @param address the address, for people to read
 */
public record DibsTarget(String address) {}
