package dibs.loader;

import java.io.IOException;
import java.io.InputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.zip.CRC32;

/**
 * A library that the jar of every platform carries as the bytes that make it from another
 * platform's library, its base: {@code dibs/native/<platform>.diff}, written by
 * {@code scripts/native-diff.py}, whose text describes the format. The musl, macOS and Windows
 * libraries differ from the glibc one of their machine in a fraction of their bytes, which takes
 * the jar from 7.9 to about 5 MB; each platform's own jar carries its library whole.
 *
 * <p>Nothing is loaded that is not proven to be the library the diff was made for: the base must
 * have the size and CRC-32 the diff names (another build's base is refused, never patched), every
 * step must stay inside the base, the library and the diff, and the result must have the size and
 * CRC-32 the diff names. {@link NativeCopies} also holds the result to the index's size.
 */
final class NativeDiff {
    static final String SUFFIX = ".diff";
    private static final byte[] MAGIC = {'D', 'I', 'B', 'S', 'D', 'I', 'F', '1'};

    /** Reads a base's library, by platform name. */
    @FunctionalInterface
    interface Bases {
        /** The library of {@code platform}, or null if the jar carries none. */
        byte[] read(String platform) throws IOException;
    }

    private NativeDiff() {}

    /** The class-path resource of {@code platform}'s diff. */
    static String resourcePath(String platform) {
        return NativeLoader.RESOURCE_DIR + "/" + platform + SUFFIX;
    }

    /**
     * Makes the library from the diff in {@code in} and its base from {@code bases}.
     *
     * @throws IOException naming what does not match, if the diff is malformed or truncated, its
     *     base is missing or another build's, or the result is not the library it was made for
     */
    static byte[] apply(InputStream in, Bases bases) throws IOException {
        ByteBuffer diff = ByteBuffer.wrap(in.readAllBytes()); // big-endian, as written
        try {
            byte[] magic = new byte[MAGIC.length];
            diff.get(magic);
            if (!Arrays.equals(magic, MAGIC)) {
                throw new IOException("not a dibs diff (no DIBSDIF1 at its start)");
            }
            byte[] name = new byte[diff.getShort() & 0xffff];
            diff.get(name);
            String baseName = new String(name, StandardCharsets.US_ASCII);
            long baseSize = diff.getLong();
            int baseCrc = diff.getInt();
            long size = diff.getLong();
            int crc = diff.getInt();
            int steps = diff.getInt();
            // The steps, then the added bytes, then the copied ones: a cursor on each.
            ByteBuffer added = diff.duplicate();
            if (size < 0 || size > Integer.MAX_VALUE - 8 || steps < 0) {
                throw new IOException(
                        "its header names an impossible size (" + size + ") or step count (" + steps + ")");
            }
            if (steps > diff.remaining() / 12) {
                throw new BufferUnderflowException();
            }
            added.position(diff.position() + 12 * steps);
            long addedSize = 0;
            for (int i = 0; i < steps; i++) {
                addedSize += diff.getInt(diff.position() + 12 * i);
            }
            if (addedSize < 0) {
                throw new IOException("a step adds a negative number of bytes");
            }
            if (addedSize > added.remaining()) {
                throw new BufferUnderflowException();
            }
            ByteBuffer copied = added.duplicate();
            copied.position(added.position() + (int) addedSize);
            if (addedSize + copied.remaining() != size) {
                // Before anything is allocated for it: the size named must be what the diff carries.
                throw new IOException(
                        "it carries " + (addedSize + copied.remaining()) + " bytes for a library of " + size);
            }
            byte[] base = base(bases, baseName, baseSize, baseCrc);
            byte[] out = new byte[(int) size];
            int newPos = 0;
            long oldPos = 0;
            for (int i = 0; i < steps; i++) {
                int add = diff.getInt();
                int copy = diff.getInt();
                int seek = diff.getInt();
                if (add < 0 || copy < 0 || (long) newPos + add + copy > size) {
                    throw new IOException("step " + i + " writes outside the library it makes");
                }
                if (oldPos < 0 || oldPos + add > base.length) {
                    throw new IOException("step " + i + " reads outside the base");
                }
                added.get(out, newPos, add);
                int from = (int) oldPos;
                for (int k = 0; k < add; k++) {
                    out[newPos + k] += base[from + k];
                }
                copied.get(out, newPos + add, copy);
                newPos += add + copy;
                oldPos += add + (long) seek;
            }
            if (newPos != size) { // the bytes it carries make exactly the size it names, checked above
                throw new IOException("its steps make " + newPos + " of the " + size + " bytes it names");
            }
            if (crc32(out) != crc) {
                throw new IOException("the library it makes is not the one it was made for (CRC-32)");
            }
            return out;
        } catch (BufferUnderflowException | IndexOutOfBoundsException e) {
            throw new IOException("it is truncated");
        }
    }

    private static byte[] base(Bases bases, String name, long size, int crc) throws IOException {
        if (name.isEmpty()) {
            return new byte[0]; // the library is held whole
        }
        byte[] base = bases.read(name);
        if (base == null) {
            throw new IOException("its base, the " + name + " library, is not on the class path");
        }
        if (base.length != size || crc32(base) != crc) {
            throw new IOException("it was made from another build of the " + name
                    + " library (by size and CRC-32): the jar was assembled from different builds");
        }
        return base;
    }

    private static int crc32(byte[] bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes, 0, bytes.length);
        return (int) crc.getValue();
    }
}
