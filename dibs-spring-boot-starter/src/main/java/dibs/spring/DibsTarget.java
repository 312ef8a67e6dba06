package dibs.spring;

/**
 * Where the auto-configured client's Redis is, as shown by the health indicator and the startup
 * log: host and port, the Sentinels' master or the cluster's nodes, as dibs's native library
 * describes its parsed conn ({@link dibs.DibsOptions#describe()}); never credentials.
 *
 * @param address the address, for people to read
 */
public record DibsTarget(String address) {}
