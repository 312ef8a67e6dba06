package dibs;

import dibs.loader.NativeLoader;

/**
 * Native entry points that panic on purpose. They exist only in a library built with
 * {@code cargo build --features test-hooks}, which the {@code jni-panic} test execution loads
 * through {@code -Ddibs.native.path}; the shipped library has none of them.
 */
final class TestHooks {
    static {
        NativeLoader.load();
    }

    private TestHooks() {}

    /** Panics in Rust with this message. */
    static native void panic(String message);

    /** Takes the lock (atMost 60 s, atLeast 0), then panics while holding its lease. */
    static native boolean panicHoldingALease(long handle, String lockName);
}
