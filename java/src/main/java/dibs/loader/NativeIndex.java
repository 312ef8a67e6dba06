package dibs.loader;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.Locale;
import java.util.Properties;

/**
 * {@value NativeLoader#INDEX}: the native version this jar needs, and each bundled library's hash,
 * size and CRC-32.
 */
final class NativeIndex {
    final String version;
    private final Properties entries;

    private NativeIndex(String version, Properties entries) {
        this.version = version;
        this.entries = entries;
    }

    static NativeIndex read(ClassLoader cl) throws IndexException {
        Properties p = new Properties();
        URL url = NativeLoader.resource(cl, NativeLoader.INDEX);
        if (url == null) {
            throw new IndexException("the dibs jar carries no " + NativeLoader.INDEX + ", which names the native"
                    + " library version it needs and the bundled libraries' hashes: build the jar with"
                    + " its pom.xml or build.gradle.kts, which run scripts/build-natives.sh to write it");
        }
        try (InputStream in = url.openStream()) {
            p.load(in);
        } catch (IOException | IllegalArgumentException e) {
            throw new IndexException("cannot read the dibs jar's " + NativeLoader.INDEX + ": " + e);
        }
        return parse(p);
    }

    static NativeIndex parse(Properties p) throws IndexException {
        String version = p.getProperty("version", "").trim();
        if (version.isEmpty()) {
            throw new IndexException("the dibs jar's " + NativeLoader.INDEX + " names no version");
        }
        return new NativeIndex(version, p);
    }

    /** The hash, size and CRC-32 of {@code platform}'s library, or null if the index has none. */
    Library library(String platform) {
        String sha256 = entries.getProperty(platform + ".sha256", "").trim().toLowerCase(Locale.ROOT);
        String size = entries.getProperty(platform + ".size", "").trim();
        String crc32 = entries.getProperty(platform + ".crc32", "").trim().toLowerCase(Locale.ROOT);
        if (sha256.length() != 64
                || !allOf(sha256, "0123456789abcdef")
                || size.isEmpty()
                || size.length() > 18
                || !allOf(size, "0123456789")
                || crc32.length() != 8
                || !allOf(crc32, "0123456789abcdef")) {
            return null;
        }
        return new Library(sha256, Long.parseLong(size), Long.parseLong(crc32, 16));
    }

    /** Whether every character of {@code s} is in {@code allowed} (no regex: it costs startup time). */
    private static boolean allOf(String s, String allowed) {
        for (int i = 0; i < s.length(); i++) {
            if (allowed.indexOf(s.charAt(i)) < 0) {
                return false;
            }
        }
        return true;
    }

    /** One bundled library, as the index describes it. */
    static final class Library {
        final String sha256;
        final long size;
        /**
         * The CRC-32 of the library ({@link java.util.zip.CRC32}), what a copy found in place is
         * checked against before it is loaded: a cold JVM reads the 2.2 MB library and computes it
         * in a few ms at most (the CRC itself, about 0.5 ms), where its SHA-256 costs 65 to 270 ms,
         * on every start. It guards against a copy damaged by accident (a crash
         * before its data reached the disk); the copy's owner and mode guard against anyone else.
         */
        final long crc32;

        Library(String sha256, long size, long crc32) {
            this.sha256 = sha256;
            this.size = size;
            this.crc32 = crc32;
        }
    }

    /** The jar's index is missing or unreadable. */
    static final class IndexException extends Exception {
        private static final long serialVersionUID = 1L;

        IndexException(String message) {
            super(message);
        }
    }
}
