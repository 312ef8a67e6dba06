//! The contenders, and how each makes one lock cycle (`SET NX PX`, then the release script)
//! against the shared [`Setup`].

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dibs::{
    ConnSpec, Ended, Ending, LockParams, Locker, Outcome, DEFAULT_KEY_PREFIX,
    DEFAULT_READ_TIMEOUT_MS,
};
use redis::aio::MultiplexedConnection;
use redis::io::tcp::TcpSettings;
use redis::{AsyncConnectionConfig, Client, Cmd, IntoConnectionInfo};
use tokio::runtime::Runtime;

use crate::support::{Res, Server};
use crate::LOCK_MS;

/// The release script of src/lock.rs, copied because it is private there. If the copy drifted,
/// dibs would get NOSCRIPT and fall back to EVAL; `main` checks that EVAL never ran.
const RELEASE_SCRIPT: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local remaining = tonumber(ARGV[2])
if remaining > 0 then
  redis.call('PEXPIRE', KEYS[1], remaining)
  return 1
end
redis.call('DEL', KEYS[1])
return 2
"#;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contender {
    Dibs,
    Multiplexed,
    RawSync,
    RedisBenchmark,
}

pub const CONTENDERS: [Contender; 4] = [
    Contender::Dibs,
    Contender::Multiplexed,
    Contender::RawSync,
    Contender::RedisBenchmark,
];

impl Contender {
    pub fn label(self) -> &'static str {
        match self {
            Contender::Dibs => "dibs (sync pool)",
            Contender::Multiplexed => "multiplexed (1 conn, tokio)",
            Contender::RawSync => "raw sync (1 conn/thread)",
            Contender::RedisBenchmark => "redis-benchmark SET",
        }
    }
}

/// What the contenders share, made once, so that no run pays for connecting or loading.
pub struct Setup {
    pub port: u16,
    locker: Locker,
    pub client: Client,
    rt: Runtime,
    mux: MultiplexedConnection,
    sha: String,
}

impl Setup {
    pub fn new(server: &Server) -> Res<Setup> {
        let locker = Locker::new(ConnSpec::from_uri(&server.uri())?)?;
        // TCP_NODELAY as dibs's pool sets it: the redis crate leaves Nagle on.
        let info = server
            .uri()
            .into_connection_info()?
            .set_tcp_settings(TcpSettings::default().set_nodelay(true));
        let client = Client::open(info)?;
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(RELEASE_SCRIPT)
            .query(&mut client.get_connection()?)?;
        // Default worker count (one per core): what a runtime started inside a JVM would get.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        // dibs's read timeout rather than the crate's 500 ms, so both fail alike under load.
        let config = AsyncConnectionConfig::new()
            .set_response_timeout(Some(Duration::from_millis(DEFAULT_READ_TIMEOUT_MS)));
        let mux = rt.block_on(client.get_multiplexed_async_connection_with_config(&config))?;
        Ok(Setup {
            port: server.port,
            locker,
            client,
            rt,
            mux,
            sha,
        })
    }

    /// One lock cycle on lock `name`, as `contender` does it. Make it on the thread that runs it.
    pub fn cycle<'a>(&'a self, contender: Contender, name: &str) -> Res<Box<dyn FnMut() + 'a>> {
        let key = format!("{DEFAULT_KEY_PREFIX}{name}");
        Ok(match contender {
            Contender::Dibs => {
                let name = name.to_owned();
                // Params are built per call, as the JNI entry point does.
                Box::new(move || {
                    let params = LockParams::from_millis(&name, LOCK_MS, 0).expect("lock params");
                    let outcome = self.locker.execute(&params, || ()).expect("dibs cycle");
                    assert!(
                        matches!(
                            outcome,
                            Outcome::Ran {
                                ending: Ending {
                                    ended: Ended::Released,
                                    ..
                                },
                                ..
                            }
                        ),
                        "dibs: {outcome:?}"
                    );
                })
            }
            Contender::Multiplexed => {
                // A clone is a handle on the same connection, not a new one.
                let mut mux = self.mux.clone();
                Box::new(move || {
                    self.rt.block_on(async {
                        let value = holder_value();
                        let won = set_nx(&key, &value).query_async(&mut mux).await;
                        let code = release(&self.sha, &key, &value).query_async(&mut mux).await;
                        check(won.expect("SET"), code.expect("EVALSHA"));
                    })
                })
            }
            Contender::RawSync => {
                let mut conn = self.client.get_connection()?;
                Box::new(move || {
                    let value = holder_value();
                    let won = set_nx(&key, &value).query(&mut conn).expect("SET");
                    let code = release(&self.sha, &key, &value).query(&mut conn);
                    check(won, code.expect("EVALSHA"));
                })
            }
            Contender::RedisBenchmark => unreachable!("redis-benchmark is its own process"),
        })
    }
}

fn set_nx(key: &str, value: &str) -> Cmd {
    let mut cmd = redis::cmd("SET");
    cmd.arg(key).arg(value).arg("NX").arg("PX").arg(LOCK_MS);
    cmd
}

/// The release with nothing of `atLeast` left: the script deletes the key.
fn release(sha: &str, key: &str, value: &str) -> Cmd {
    let mut cmd = redis::cmd("EVALSHA");
    cmd.arg(sha).arg(1).arg(key).arg(value).arg(0);
    cmd
}

/// Every cycle must win the lock and delete it, or the figures would not be of a lock cycle.
fn check(won: Option<String>, code: i64) {
    assert!(won.is_some(), "SET NX did not win a free lock");
    assert_eq!(code, 2, "release script did not delete the key");
}

/// Shaped like dibs's holder value (`uuid;host;pid;unix-ms`) so the floor moves the same bytes
/// and does the same per-call work.
fn holder_value() -> String {
    let unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!(
        "{};bench-host;{};{unix_ms}",
        uuid::Uuid::new_v4(),
        std::process::id()
    )
}
