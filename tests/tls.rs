//! TLS: `rediss://` against a redis-server with a throwaway CA that `openssl` makes here.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::RedisServer;
use dibs::{ConnSpec, Error, LockParams, Locker, Outcome, SpecValue};

struct Pki {
    dir: PathBuf,
}

impl Pki {
    /// A CA, a server certificate it signs for 127.0.0.1 and localhost, and an unrelated CA.
    fn new() -> Pki {
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
            "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
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

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn tls_locker(server: &RedisServer, ca: Option<&Path>) -> Locker {
    let mut entries = vec![(
        "uri".to_owned(),
        SpecValue::Str(format!("rediss://127.0.0.1:{}", server.port)),
    )];
    if let Some(ca) = ca {
        entries.push((
            "ca-cert".to_owned(),
            SpecValue::Str(ca.display().to_string()),
        ));
    }
    entries.push(("timeout-ms".to_owned(), SpecValue::Int(2000)));
    Locker::new(ConnSpec::from_map(&entries).unwrap()).unwrap()
}

#[test]
fn rediss_verifies_the_server_against_the_given_ca() {
    let pki = Pki::new();
    let server = RedisServer::start_tls(
        &pki.path("server.pem"),
        &pki.path("server.key"),
        &pki.path("ca.pem"),
    );
    let params = LockParams::from_secs("tls", 10, 0).unwrap();

    let outcome = tls_locker(&server, Some(&pki.path("ca.pem")))
        .execute(&params, || "over tls")
        .unwrap();
    assert!(matches!(
        outcome,
        Outcome::Ran {
            value: "over tls",
            ..
        }
    ));

    for ca in [Some(pki.path("other-ca.pem")), None] {
        let err = tls_locker(&server, ca.as_deref())
            .execute(&params, || ())
            .unwrap_err();
        assert!(matches!(err, Error::Connection(_)), "{err:?}");
        let message = err.to_string();
        assert!(message.to_lowercase().contains("certificate"), "{message}");
        assert!(
            message.contains(&format!("127.0.0.1:{}", server.port)),
            "{message}"
        );
    }
}

#[test]
fn an_unreadable_ca_file_is_an_invalid_argument() {
    let spec = ConnSpec::from_map(&[
        ("uri".into(), SpecValue::Str("rediss://127.0.0.1:1".into())),
        (
            "ca-cert".into(),
            SpecValue::Str("/nonexistent/ca.pem".into()),
        ),
    ])
    .unwrap();
    let err = Locker::new(spec).err().expect("must fail");
    assert!(
        matches!(err, Error::InvalidArgument { arg: "ca-cert", .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("/nonexistent/ca.pem"), "{err}");

    let garbage = std::env::temp_dir().join(format!("dibs-garbage-{}.pem", std::process::id()));
    std::fs::write(&garbage, "not a certificate").unwrap();
    let spec = ConnSpec::from_map(&[
        ("uri".into(), SpecValue::Str("rediss://127.0.0.1:1".into())),
        (
            "ca-cert".into(),
            SpecValue::Str(garbage.display().to_string()),
        ),
    ])
    .unwrap();
    let err = Locker::new(spec).err().expect("must fail");
    let _ = std::fs::remove_file(&garbage);
    assert!(
        matches!(err, Error::InvalidArgument { arg: "ca-cert", .. }),
        "{err:?}"
    );
}
