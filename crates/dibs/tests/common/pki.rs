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
    /// unrelated CA.
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
        run(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ]);
        std::fs::write(
            dir.join("san.ext"),
            format!(
                "subjectAltName=IP:127.0.0.1,DNS:localhost,{}\n",
                TEST_NAMES.map(|n| format!("DNS:{n}")).join(",")
            ),
        )
        .unwrap();
        run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            "server.pem",
        ]);
        Pki { dir }
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
