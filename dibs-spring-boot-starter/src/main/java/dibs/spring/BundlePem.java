package dibs.spring;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.cert.Certificate;
import java.security.interfaces.ECPrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import org.springframework.boot.ssl.SslBundle;

/**
 * A Spring SSL bundle as the PEM texts that dibs takes in memory: its trust store's certificates
 * as the CA ({@code ca-cert-pem}), its key store's private key and certificate chain as the
 * client certificate ({@code client-cert-pem}, {@code client-key-pem}). Whatever the bundle's kind
 * (PEM, JKS, PKCS#12, password-protected or not), Spring has already opened it into key stores;
 * nothing is written to disk, so no decrypted key outlives the process, even one killed with
 * SIGKILL. A bundle that cannot be used this way fails the startup, naming the property that
 * chose it.
 */
record BundlePem(String caCert, String clientCert, String clientKey) {
    /** No bundle: the platform's trust store, no client certificate. */
    static final BundlePem NONE = new BundlePem(null, null, null);

    private static final Base64.Encoder PEM_BASE64 =
            Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));

    /**
     * @param property the property that named the bundle, for messages
     * @throws DibsStartupException naming {@code property} when a store cannot be read
     */
    static BundlePem of(SslBundle bundle, String property) {
        String ca = trustStoreCa(bundle, property);
        KeyStore keys = bundle.getStores().getKeyStore();
        if (keys == null) {
            return new BundlePem(ca, null, null);
        }
        try {
            String alias = keyAlias(bundle, keys, property);
            PrivateKey key = privateKey(bundle, keys, alias, property);
            Certificate[] chain = keys.getCertificateChain(alias);
            if (chain == null || chain.length == 0) {
                throw new DibsStartupException(
                        property, "names a bundle whose key '" + alias + "' has no certificate chain in its key store");
            }
            StringBuilder pem = new StringBuilder();
            for (Certificate certificate : chain) {
                pem.append(pem("CERTIFICATE", certificate.getEncoded()));
            }
            byte[] pkcs8 = key.getEncoded();
            if (pkcs8 == null) {
                throw new DibsStartupException(
                        property,
                        "names a bundle whose key '" + alias
                                + "' cannot be exported (a hardware key store?): dibs needs the key's PKCS#8");
            }
            if (key instanceof ECPrivateKey ec) {
                pkcs8 = Der.ecPkcs8WithPublicKey(pkcs8, ec, chain[0].getPublicKey());
            }
            // PKCS#8, the encoding every Java private key gives, and one rustls reads.
            return new BundlePem(ca, pem.toString(), pem("PRIVATE KEY", pkcs8));
        } catch (GeneralSecurityException e) {
            throw new DibsStartupException(
                    property, "names a bundle whose key store could not be read: " + e.getMessage());
        }
    }

    /** The bundle's key alias, or else the one key entry of its store. */
    private static String keyAlias(SslBundle bundle, KeyStore keys, String property) throws GeneralSecurityException {
        String alias = bundle.getKey().getAlias();
        if (alias != null) {
            if (!keys.isKeyEntry(alias)) {
                throw new DibsStartupException(
                        property, "names a bundle whose key alias '" + alias + "' is no private key in its key store");
            }
            return alias;
        }
        List<String> entries = new ArrayList<>();
        for (String each : Collections.list(keys.aliases())) {
            if (keys.isKeyEntry(each)) {
                entries.add(each);
            }
        }
        if (entries.size() != 1) {
            throw new DibsStartupException(
                    property,
                    "names a bundle whose key store holds "
                            + (entries.isEmpty() ? "no private key" : entries.size() + " private keys " + entries)
                            + ": dibs presents one client certificate; name it with the bundle's key.alias");
        }
        return entries.get(0);
    }

    /**
     * The key, as Spring opens it: with the bundle's key password when it has one, else with its
     * key store's; with neither, unprotected.
     */
    private static PrivateKey privateKey(SslBundle bundle, KeyStore keys, String alias, String property)
            throws GeneralSecurityException {
        String given = bundle.getKey().getPassword() != null
                ? bundle.getKey().getPassword()
                : bundle.getStores().getKeyStorePassword();
        List<char[]> passwords = new ArrayList<>();
        if (given != null) {
            passwords.add(given.toCharArray());
        } else {
            passwords.add(null);
            passwords.add(new char[0]);
        }
        for (char[] password : passwords) {
            try {
                Key key = keys.getKey(alias, password);
                if (key instanceof PrivateKey privateKey) {
                    return privateKey;
                }
            } catch (java.security.UnrecoverableKeyException e) {
                // the next password, if any
            }
        }
        throw new DibsStartupException(
                property,
                "names a bundle whose key '" + alias + "' could not be recovered: set the bundle's key.password");
    }

    /** The certificates of the bundle's trust store as PEM; null without one. */
    private static String trustStoreCa(SslBundle bundle, String property) {
        KeyStore store = bundle.getStores().getTrustStore();
        if (store == null) {
            return null;
        }
        StringBuilder pem = new StringBuilder();
        try {
            for (String alias : Collections.list(store.aliases())) {
                Certificate certificate = store.getCertificate(alias);
                if (certificate != null) {
                    pem.append(pem("CERTIFICATE", certificate.getEncoded()));
                }
            }
        } catch (GeneralSecurityException e) {
            throw new DibsStartupException(
                    property, "names a bundle whose trust store could not be read: " + e.getMessage());
        }
        return pem.length() == 0 ? null : pem.toString();
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + PEM_BASE64.encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    /**
     * Just enough DER for one repair: the JDK encodes an EC private key's PKCS#8 without its
     * public key (optional in RFC 5915), and the TLS library under dibs (rustls on ring)
     * requires it. The public key is the certificate's.
     */
    static final class Der {
        private Der() {}

        /**
         * @param pkcs8 the JDK's {@code SEQUENCE {0, AlgorithmIdentifier, OCTET STRING {ECPrivateKey}}}
         * @return the same, its ECPrivateKey {@code {1, privateKey, [1] publicKey}}
         */
        static byte[] ecPkcs8WithPublicKey(byte[] pkcs8, ECPrivateKey key, PublicKey certified) {
            int[] outer = element(pkcs8, 0);
            int[] version = element(pkcs8, outer[1]);
            int[] algorithm = element(pkcs8, version[1] + version[2]);
            byte[] algorithmId = slice(pkcs8, version[1] + version[2], algorithm[1] + algorithm[2]);
            byte[] spki = certified.getEncoded();
            int[] spkiSeq = element(spki, 0);
            int[] spkiAlg = element(spki, spkiSeq[1]);
            int bitStringAt = spkiAlg[1] + spkiAlg[2];
            int[] bitString = element(spki, bitStringAt);
            byte[] publicKey = slice(spki, bitStringAt, bitString[1] + bitString[2]);
            int size = (key.getParams().getCurve().getField().getFieldSize() + 7) / 8;
            byte[] scalar = key.getS().toByteArray();
            byte[] fixed = new byte[size];
            int take = Math.min(scalar.length, size);
            System.arraycopy(scalar, scalar.length - take, fixed, size - take, take);
            byte[] ecPrivateKey =
                    tlv(0x30, concat(new byte[] {0x02, 0x01, 0x01}, tlv(0x04, fixed), tlv(0xa1, publicKey)));
            return tlv(0x30, concat(new byte[] {0x02, 0x01, 0x00}, algorithmId, tlv(0x04, ecPrivateKey)));
        }

        /** The element at {@code at}: {tag, where its content starts, its content's length}. */
        private static int[] element(byte[] der, int at) {
            int tag = der[at] & 0xff;
            int first = der[at + 1] & 0xff;
            if (first < 0x80) {
                return new int[] {tag, at + 2, first};
            }
            int bytes = first & 0x7f;
            int length = 0;
            for (int i = 0; i < bytes; i++) {
                length = (length << 8) | (der[at + 2 + i] & 0xff);
            }
            return new int[] {tag, at + 2 + bytes, length};
        }

        private static byte[] slice(byte[] der, int from, int to) {
            return java.util.Arrays.copyOfRange(der, from, to);
        }

        private static byte[] tlv(int tag, byte[] content) {
            int n = content.length;
            byte[] length = n < 0x80
                    ? new byte[] {(byte) n}
                    : n < 0x100
                            ? new byte[] {(byte) 0x81, (byte) n}
                            : new byte[] {(byte) 0x82, (byte) (n >> 8), (byte) n};
            return concat(new byte[] {(byte) tag}, length, content);
        }

        private static byte[] concat(byte[]... parts) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            for (byte[] part : parts) {
                out.writeBytes(part);
            }
            return out.toByteArray();
        }
    }

    /** Never the texts: which parts the bundle gave, only. */
    @Override
    public String toString() {
        return "BundlePem[ca=" + (caCert != null) + ", client=" + (clientCert != null) + "]";
    }
}
