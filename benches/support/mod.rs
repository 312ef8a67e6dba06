//! What the benchmarks share: a `redis-server` of their own on a free loopback port.

use std::error::Error;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use redis::Client;

pub type Res<T> = Result<T, Box<dyn Error>>;

/// A `redis-server` of our own on a free loopback port, killed on drop (so on panic too).
pub struct Server {
    pub port: u16,
    pub child: Child,
    /// `redis_version` from INFO.
    pub version: String,
}

impl Server {
    #[allow(dead_code)] // cluster_cycle starts its nodes with arguments
    pub fn start() -> Res<Server> {
        Server::start_with(&[])
    }

    /// With extra `redis-server` arguments, e.g. `["--replicaof", "127.0.0.1", "6379"]`.
    pub fn start_with(extra: &[&str]) -> Res<Server> {
        // A port found free may be taken before redis binds it: try a few.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                // A replica's full sync writes an RDB file: into the temp directory, never the
                // working tree (a later --dir in `extra` wins).
                .arg("--dir")
                .arg(std::env::temp_dir())
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot run redis-server: {e}"))?;
            let mut server = Server {
                port,
                child,
                version: String::new(),
            };
            if let Some(version) = server.ours()? {
                server.version = version;
                return Ok(server);
            }
        }
        Err("redis-server did not start on a free port".into())
    }

    /// The server's version once it answers and is our child (by its pid): never someone else's.
    fn ours(&mut self) -> Res<Option<String>> {
        let client = Client::open(self.uri())?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(None);
            }
            if let Ok(mut conn) = client.get_connection_with_timeout(Duration::from_millis(200)) {
                let info: String = redis::cmd("INFO").arg("server").query(&mut conn)?;
                let ours = info_field(&info, "process_id:") == Some(&self.child.id().to_string());
                return Ok(ours.then(|| {
                    info_field(&info, "redis_version:")
                        .unwrap_or_default()
                        .to_owned()
                }));
            }
            thread::sleep(Duration::from_millis(10));
        }
        Ok(None)
    }

    pub fn uri(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A field of an INFO reply, e.g. `info_field(text, "process_id:")`.
pub fn info_field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.strip_prefix(name))
        .map(str::trim)
}

/// p50, p99 and mean of `call` in µs, over `cycles` calls after `warmup` unmeasured ones.
#[allow(dead_code)] // not every benchmark times single calls
pub fn measure(warmup: usize, cycles: usize, mut call: impl FnMut()) -> [f64; 3] {
    for _ in 0..warmup {
        call();
    }
    let mut micros: Vec<f64> = (0..cycles)
        .map(|_| {
            let start = Instant::now();
            call();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    let mean = micros.iter().sum::<f64>() / cycles as f64;
    micros.sort_by(f64::total_cmp);
    // Nearest rank.
    let at = |q: f64| micros[((q * cycles as f64).ceil() as usize).clamp(1, cycles) - 1];
    [at(0.50), at(0.99), mean]
}

/// EVALSHA and EVAL calls the server has counted (`INFO commandstats`).
#[allow(dead_code)] // not every benchmark counts them
pub fn script_calls(conn: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(conn)
        .unwrap_or_default();
    ["cmdstat_evalsha:calls=", "cmdstat_eval:calls="]
        .iter()
        .filter_map(|prefix| {
            info.lines()
                .find_map(|l| l.strip_prefix(prefix))?
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}
