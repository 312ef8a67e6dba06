package dibs.spring;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import org.springframework.boot.ssl.SslBundle;

/**
 * A Spring SSL bundle as the PEM files that dibs reads: its trust store's certificates as the CA
 * ({@code ca-cert}), its key store's private key and certificate chain as the client certificate
 * ({@code client-cert}, {@code client-key}). Whatever the bundle's kind (PEM, JKS, PKCS#12),
 * Spring has already made it into key stores; they are written here to private temporary files,
 * deleted when the JVM exits. A bundle that cannot be used this way fails the startup, naming
 * the property that chose it.
 */
record TlsFiles(Path caCert, Path clientCert, Path clientKey) {
    /** No bundle: the platform's trust store, no client certificate. */
    static final TlsFiles NONE = new TlsFiles(null, null, null);

    private static final Base64.Encoder PEM_BASE64 =
            Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));

    /**
     * @param property the property that named the bundle, for messages
     * @throws DibsStartupException naming {@code property} when a store cannot be read
     */
    static TlsFiles of(SslBundle bundle, String property) {
        Path ca = trustStoreCa(bundle, property);
        KeyStore keys = bundle.getStores().getKeyStore();
        if (keys == null) {
            return new TlsFiles(ca, null, null);
        }
        try {
            String alias = keyAlias(bundle, keys, property);
            PrivateKey key = privateKey(bundle, keys, alias, property);
            Certificate[] chain = keys.getCertificateChain(alias);
            if (chain == null || chain.length == 0) {
                throw new DibsStartupException(property, "names a bundle whose key '" + alias
                        + "' has no certificate chain in its key store");
            }
            StringBuilder pem = new StringBuilder();
            for (Certificate certificate : chain) {
                pem.append(pem("CERTIFICATE", certificate.getEncoded()));
            }
            // PKCS#8, the encoding every Java private key gives, and one rustls reads.
            return new TlsFiles(ca, write(property, "dibs-client-", ".pem", pem.toString()),
                    write(property, "dibs-client-", ".key", pem("PRIVATE KEY", key.getEncoded())));
        } catch (GeneralSecurityException e) {
            throw new DibsStartupException(property, "names a bundle whose key store could not be read: "
                    + e.getMessage());
        }
    }

    /** The bundle's key alias, or else the one key entry of its store. */
    private static String keyAlias(SslBundle bundle, KeyStore keys, String property)
            throws GeneralSecurityException {
        String alias = bundle.getKey().getAlias();
        if (alias != null) {
            if (!keys.isKeyEntry(alias)) {
                throw new DibsStartupException(property, "names a bundle whose key alias '" + alias
                        + "' is no private key in its key store");
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
            throw new DibsStartupException(property, "names a bundle whose key store holds "
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
                ? bundle.getKey().getPassword() : bundle.getStores().getKeyStorePassword();
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
        throw new DibsStartupException(property, "names a bundle whose key '" + alias
                + "' could not be recovered: set the bundle's key.password");
    }

    /** The certificates of the bundle's trust store as a PEM file; null without one. */
    private static Path trustStoreCa(SslBundle bundle, String property) {
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
            throw new DibsStartupException(property, "names a bundle whose trust store could not be read: "
                    + e.getMessage());
        }
        return pem.length() == 0 ? null : write(property, "dibs-ca-", ".pem", pem.toString());
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + PEM_BASE64.encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    /** A temporary file only this user may read (it may hold a private key). */
    private static Path write(String property, String prefix, String suffix, String content) {
        try {
            Path file;
            try {
                file = Files.createTempFile(prefix, suffix,
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            } catch (UnsupportedOperationException e) {
                file = Files.createTempFile(prefix, suffix); // no POSIX permissions: the user's own temp folder
            }
            file.toFile().deleteOnExit();
            Files.writeString(file, content, StandardCharsets.US_ASCII);
            return file;
        } catch (IOException e) {
            throw new DibsStartupException(property, "the bundle could not be written to a temporary file: "
                    + e.getMessage());
        }
    }

    /** Never the files' contents. */
    @Override
    public String toString() {
        return "TlsFiles[ca=" + caCert + ", client=" + clientCert + "]";
    }
}
