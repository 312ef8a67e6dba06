/**
 * dibs: a distributed scheduler lock on Redis. When the same scheduled job runs on N instances of
 * a service, exactly one instance runs it per tick. The module exports its API, package
 * {@code dibs}, alone; the native library's loader ({@code dibs.loader}) is its own.
 */
module dibs {
    exports dibs;
}
