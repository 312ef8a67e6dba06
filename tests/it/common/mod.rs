//! A throwaway `redis-server` on a free loopback port, for integration tests. It never uses a
//! server that happens to be running: each fixture starts its own and kills it on drop.
#![allow(dead_code)]

pub mod cluster;
pub mod pki;
pub mod previous;
pub mod proxy;
pub mod replication;
pub mod topology;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

pub struct RedisServer {
    pub port: u16,
    dir: PathBuf,
    extra: Vec<String>,
    /// Serve TLS only, on `port`, with these `redis-server` TLS arguments.
    tls: Vec<String>,
    /// How `admin` reaches a TLS server.
    admin_tls: Option<AdminTls>,
    child: Option<Child>,
}

/// The CA and client certificate files of an admin connection over TLS.
#[derive(Clone)]
pub struct AdminTls {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

impl AdminTls {
    /// The PKI's CA and its `client` certificate.
    pub fn of(pki: &pki::Pki) -> AdminTls {
        AdminTls {
            ca: pki.path("ca.pem"),
            cert: pki.path("client.pem"),
            key: pki.path("client.key"),
        }
    }
}

/// A direct connection to a loopback port for assertions, over TLS when `tls` is given, then
/// `AUTH` with `auth` (user, password) when given.
pub fn connect_to(
    port: u16,
    tls: Option<&AdminTls>,
    auth: Option<(Option<&str>, &str)>,
) -> redis::RedisResult<redis::Connection> {
    let client = match tls {
        None => redis::Client::open(format!("redis://127.0.0.1:{port}"))?,
        Some(t) => {
            let read = |p: &Path| std::fs::read(p).unwrap();
            redis::Client::build_with_tls(
                format!("rediss://127.0.0.1:{port}"),
                redis::TlsCertificates {
                    client_tls: Some(redis::ClientTlsConfig {
                        client_cert: read(&t.cert),
                        client_key: read(&t.key),
                    }),
                    root_cert: Some(read(&t.ca)),
                },
            )?
        }
    };
    let mut conn = client.get_connection_with_timeout(Duration::from_secs(5))?;
    if let Some((user, password)) = auth {
        let mut auth = redis::cmd("AUTH");
        if let Some(user) = user {
            auth.arg(user);
        }
        auth.arg(password).query::<()>(&mut conn)?;
    }
    Ok(conn)
}

impl RedisServer {
    pub fn start() -> RedisServer {
        RedisServer::start_with(&[])
    }

    /// Starts a server with extra `redis-server` arguments, e.g. `["--requirepass", "pw"]`.
    pub fn start_with(extra: &[&str]) -> RedisServer {
        RedisServer::start_full(extra, Vec::new())
    }

    /// A server that speaks TLS only, with the PKI's server certificate, and Redis's default
    /// `tls-auth-clients yes`: a client must present a certificate the PKI's CA signed.
    pub fn start_tls(pki: &pki::Pki) -> RedisServer {
        RedisServer::start_tls_with(pki, &[])
    }

    /// The same, with extra `redis-server` arguments (e.g. `--tls-auth-clients optional`).
    pub fn start_tls_with(pki: &pki::Pki, extra: &[&str]) -> RedisServer {
        let tls = [
            ("--tls-cert-file", "server.pem"),
            ("--tls-key-file", "server.key"),
            ("--tls-ca-cert-file", "ca.pem"),
        ]
        .iter()
        .flat_map(|(flag, file)| [flag.to_string(), pki.path(file).display().to_string()])
        .collect();
        let mut server = RedisServer::start_full(extra, tls);
        server.admin_tls = Some(AdminTls::of(pki));
        server
    }

    /// `redis-cli`'s arguments for reaching this server: its TLS files when it speaks TLS.
    pub fn cli_args(&self) -> Vec<String> {
        match &self.admin_tls {
            None => Vec::new(),
            Some(t) => vec![
                "--tls".into(),
                "--cacert".into(),
                t.ca.display().to_string(),
                "--cert".into(),
                t.cert.display().to_string(),
                "--key".into(),
                t.key.display().to_string(),
            ],
        }
    }

    fn start_full(extra: &[&str], tls: Vec<String>) -> RedisServer {
        let dir = std::env::temp_dir().join(format!(
            "dibs-test-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut server = RedisServer {
            port: 0,
            dir,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            tls,
            admin_tls: None,
            child: None,
        };
        // A port found free may be taken before redis binds it: try a few.
        for _ in 0..5 {
            server.port = free_port();
            if server.launch() {
                return server;
            }
        }
        panic!("redis-server did not start; is it installed?");
    }

    fn launch(&mut self) -> bool {
        let port = self.port.to_string();
        let listen: &[&str] = if self.tls.is_empty() {
            &["--port", &port]
        } else {
            &["--port", "0", "--tls-port", &port]
        };
        // Readiness is read from our own server's log, not from the port: a port found free may
        // belong to another test's server by now, and a connect would reach that one.
        let log = self.dir.join(format!("redis-{port}.log"));
        let _ = std::fs::remove_file(&log);
        let mut child = Command::new(redis_server())
            .args(listen)
            .arg("--logfile")
            .arg(&log)
            .args(["--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .args(&self.extra)
            .args(&self.tls)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server (apt-get install redis-server)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return false; // exited: most likely the port was taken
            }
            let ready = std::fs::read_to_string(&log)
                .is_ok_and(|text| text.contains("Ready to accept connections"));
            if ready {
                self.child = Some(child);
                return true;
            }
            sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }

    pub fn uri(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// The Cluster slot of `key`, as this node computes it (`CLUSTER KEYSLOT`).
    pub fn keyslot(&self, key: &str) -> u16 {
        redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query(&mut self.admin())
            .unwrap()
    }

    /// A direct connection for assertions, as the default user.
    pub fn admin(&self) -> redis::Connection {
        let password = self
            .extra
            .iter()
            .position(|a| a == "--requirepass")
            .map(|i| self.extra[i + 1].as_str());
        connect_to(
            self.port,
            self.admin_tls.as_ref(),
            password.map(|p| (None, p)),
        )
        .unwrap()
    }

    /// Whether `key` exists in db 0.
    pub fn exists(&self, key: &str) -> bool {
        redis::cmd("EXISTS")
            .arg(key)
            .query(&mut self.admin())
            .unwrap()
    }

    /// Kills the server at once (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port, empty.
    pub fn restart(&mut self) {
        self.kill();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.launch() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not restart on {}",
                self.port
            );
            sleep(Duration::from_millis(50));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("server is running").id()
    }

    /// Sends `sig` (`-STOP` freezes it, `-CONT` thaws it) to the server.
    pub fn signal(&self, sig: &str) {
        assert!(Command::new("kill")
            .args([sig, &self.pid().to_string()])
            .status()
            .unwrap()
            .success());
    }

    /// The key's PTTL, ms (-2: no key).
    pub fn pttl(&self, key: &str) -> i64 {
        redis::cmd("PTTL")
            .arg(key)
            .query(&mut self.admin())
            .unwrap()
    }

    /// `calls` of a command in INFO commandstats (0 when never called).
    pub fn calls(&self, command: &str) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut self.admin())
            .unwrap();
        let prefix = format!("cmdstat_{command}:calls=");
        info.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(|rest| rest.split(',').next().unwrap().parse().unwrap())
            .unwrap_or(0)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The `redis-server` the tests start: `DIBS_REDIS_SERVER` when set (the compatibility matrix runs
/// the suites with each server it built, see `scripts/compat-matrix.sh`), else the one on PATH.
pub fn redis_server() -> String {
    std::env::var("DIBS_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned())
}

/// The `redis-cli` beside it: `DIBS_REDIS_CLI`, else the one on PATH.
pub fn redis_cli() -> String {
    std::env::var("DIBS_REDIS_CLI").unwrap_or_else(|_| "redis-cli".to_owned())
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The question `dibs check --within WINDOW` asks.
pub fn within(window: std::time::Duration) -> dibs::Question {
    dibs::Question {
        within: Some(window),
        ..dibs::Question::default()
    }
}

/// Whether this test runs in a process of its own, for a test that counts the process's threads
/// or sockets. Among other modules' tests in one program, it runs itself again alone (this
/// program, `--exact` its `name`), asserts that passed, and returns false: the caller returns.
pub fn alone(name: &str) -> bool {
    const ALONE: &str = "DIBS_TEST_ALONE";
    if std::env::var_os(ALONE).is_some() {
        return true;
    }
    let status = Command::new(std::env::current_exe().expect("this test program"))
        .args(["--exact", name, "--test-threads", "1", "--nocapture"])
        .env(ALONE, "1")
        .status()
        .expect("run this test program again");
    assert!(status.success(), "{name}, run alone, failed");
    false
}
