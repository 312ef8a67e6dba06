//! A throwaway PKI made with `openssl`, for TLS tests.

use std::path::PathBuf;
use std::process::Command;

/// Host names that tests map in a private `/etc/hosts`; the server certificate covers them.
pub const TEST_NAMES: [&str; 2] = ["dibs-multi.test", "dibs-silent.test"];

pub struct Pki {
    dir: PathBuf,
}

impl Pki {
    /// A CA, a server certificate it signs for 127.0.0.1, localhost and the names
    /// [`TEST_NAMES`] (which the resolution tests map in their own `/etc/hosts`), and an
    /// unrelated CA. Client certificates: `client` (signed by the CA), `other-client` (by the
    /// unrelated CA), and `chain-client`, signed by an intermediate CA that the CA signs, its
    /// `.pem` holding the leaf and then the intermediate.
    pub fn new() -> Pki {
        let dir = std::env::temp_dir().join(format!("dibs-tls-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let run = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .current_dir(&dir)
                .output()
                .expect("openssl");
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        for ca in ["ca", "other-ca"] {
            run(&[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN=dibs test {ca}"),
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
            ]);
        }
        std::fs::write(
            dir.join("san.ext"),
            format!(
                "subjectAltName=IP:127.0.0.1,DNS:localhost,{}\n",
                TEST_NAMES.map(|n| format!("DNS:{n}")).join(",")
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("ca.ext"),
            "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n",
        )
        .unwrap();
        // Extensions make an X.509 v3 certificate: rustls refuses v1, which is what none gives.
        std::fs::write(
            dir.join("client.ext"),
            "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
        )
        .unwrap();
        // Each: its name (the .key and .pem files), its subject, who signs it, its extensions.
        for (name, subject, issuer, ext) in [
            ("server", "localhost", "ca", "san.ext"),
            ("client", "dibs test client", "ca", "client.ext"),
            (
                "other-client",
                "dibs test other-client",
                "other-ca",
                "client.ext",
            ),
            ("inter-ca", "dibs test inter-ca", "ca", "ca.ext"),
            (
                "chain-client",
                "dibs test chain-client",
                "inter-ca",
                "client.ext",
            ),
        ] {
            let (key, csr, pem) = (
                format!("{name}.key"),
                format!("{name}.csr"),
                format!("{name}.pem"),
            );
            let subject = format!("/CN={subject}");
            run(&[
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", &subject, "-keyout", &key, "-out",
                &csr,
            ]);
            let (ca, ca_key) = (format!("{issuer}.pem"), format!("{issuer}.key"));
            run(&[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                &ca,
                "-CAkey",
                &ca_key,
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                ext,
                "-out",
                &pem,
            ]);
        }
        let mut chain = std::fs::read(dir.join("chain-client.pem")).unwrap();
        chain.extend(std::fs::read(dir.join("inter-ca.pem")).unwrap());
        std::fs::write(dir.join("chain-client.pem"), chain).unwrap();
        Pki { dir }
    }

    /// The conn keys that trust this CA and present the client certificate `client`.
    pub fn conn_keys(&self, client: &str) -> Vec<(&'static str, String)> {
        vec![
            ("ca-cert", self.path("ca.pem").display().to_string()),
            (
                "client-cert",
                self.path(&format!("{client}.pem")).display().to_string(),
            ),
            (
                "client-key",
                self.path(&format!("{client}.key")).display().to_string(),
            ),
        ]
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
