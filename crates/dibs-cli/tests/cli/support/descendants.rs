//! A job whose work is done by a grandchild of `dibs run`, for the tests of issue 42 (2): CMD is
//! bash, which runs [`LOOP`] (or leaves it running as a daemon) the way `/opt/report.sh` runs its
//! program; and a second `dibs run` of the same lock, tried again and again until it wins.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::{text, TempDir};

/// Keep-alive extends a 3 s lock: the lock outlives a killed dibs by 3 s at most. Its
/// extensions wait 750 ms at most (a loopback server answers in well under 1 ms).
pub const KEPT_ALIVE: [&str; 5] = [
    "--at-most",
    "3s",
    "--keep-alive",
    "--redis-opt",
    "timeout-ms=250",
];

/// The grandchild: writes a timestamp (ns) to argv[1] every 50 ms, and its pid to argv[1].pid
/// once it runs. On SIGTERM, SIGINT or SIGHUP: with argv[2] `finish`, five more timestamps
/// (a program that finishes its work before it stops), then exit 0; with `ignore`, it goes on.
pub const LOOP: &str = r#"
out=$1
stamp() { date +%s%N >> "$out"; sleep 0.05; }
if [ "$2" = finish ]; then
  trap 'i=0; while [ $i -lt 5 ]; do stamp; i=$((i+1)); done; exit 0' TERM INT HUP
else
  trap '' TERM INT HUP
fi
stamp
echo $$ > "$out.pid.tmp" && mv "$out.pid.tmp" "$out.pid"
while :; do stamp; done
"#;

/// How CMD runs [`LOOP`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `bash -c 'sh LOOP ...; exit $?'`: bash waits for it, in CMD's process group.
    Grandchild,
    /// `bash -c 'setsid sh LOOP ... & exit 0'`: a daemon in a session of its own, and bash exits
    /// at once.
    Daemon,
    /// `bash -c 'set -m; sh LOOP ... & wait'`: job control puts it in a process group of its
    /// own (in dibs's session), and bash waits for it.
    JobControl,
    /// Both: a setsid daemon (writing to the job's file) and a `set -m` job (writing to
    /// [`Job::job_out`]), and bash waits for them.
    DaemonAndJob,
}

/// The files of one job: its grandchild's timestamps and pid, and the second run's timestamp.
pub struct Job {
    dir: TempDir,
    pub name: String,
}

impl Job {
    pub fn new(name: &str) -> Job {
        let dir = TempDir::new(&format!("dibs-desc-{name}"));
        std::fs::write(dir.path().join("loop.sh"), LOOP).unwrap();
        Job {
            dir,
            name: name.to_owned(),
        }
    }

    pub fn out(&self) -> PathBuf {
        self.dir.path().join("grandchild")
    }

    /// [`Shape::DaemonAndJob`]'s job's timestamps.
    pub fn job_out(&self) -> PathBuf {
        self.dir.path().join("grandchild.job")
    }

    /// The job's directory, for a test that runs dibs as another user.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn second_out(&self) -> PathBuf {
        self.dir.path().join("second")
    }

    /// `run --redis URI --lock NAME FLAGS -- bash ...`: dibs's arguments, for `dibs` or after
    /// `timeout`.
    pub fn args(&self, uri: &str, flags: &[&str], shape: Shape, mode: &str) -> Vec<String> {
        let script = match shape {
            Shape::Grandchild => r#"sh "$0" "$1" "$2"; exit $?"#,
            Shape::Daemon => r#"setsid sh "$0" "$1" "$2" & exit 0"#,
            Shape::JobControl => r#"set -m; sh "$0" "$1" "$2" & wait"#,
            Shape::DaemonAndJob => {
                r#"setsid sh "$0" "$1" "$2" & set -m; sh "$0" "$1.job" "$2" & wait"#
            }
        };
        let mut args: Vec<String> = ["run", "--redis", uri, "--lock", &self.name]
            .iter()
            .chain(flags)
            .map(|s| s.to_string())
            .collect();
        args.extend(["--", "bash", "-c", script].map(String::from));
        args.push(self.dir.path().join("loop.sh").display().to_string());
        args.push(self.out().display().to_string());
        args.push(mode.to_owned());
        args
    }

    /// `dibs ARGS`, with no output of its own to the test's.
    /// dibs starts with the signals the tests send at their default dispositions: a test run
    /// under `nohup` (SIGHUP ignored, and so for every child, as POSIX has it) would otherwise
    /// see a SIGHUP forwarded to a command that ignores it, and wait for ever.
    pub fn dibs(&self, uri: &str, flags: &[&str], shape: Shape, mode: &str) -> Command {
        use std::os::unix::process::CommandExt;
        let mut dibs = Command::new(env!("CARGO_BIN_EXE_dibs"));
        dibs.args(self.args(uri, flags, shape, mode))
            .stdout(Stdio::null());
        // SAFETY: between fork and exec, only async-signal-safe calls (signal).
        unsafe {
            dibs.pre_exec(|| {
                for signal in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM] {
                    libc::signal(signal, libc::SIG_DFL);
                }
                Ok(())
            });
        }
        dibs
    }

    /// Waits until the grandchild runs, and returns its pid; 10 s at most, where it takes
    /// some 50 ms.
    pub fn grandchild(&self) -> i32 {
        grandchild_of(&self.out())
    }

    /// [`Shape::DaemonAndJob`]'s job, as [`Job::grandchild`].
    pub fn job_grandchild(&self) -> i32 {
        grandchild_of(&self.job_out())
    }

    /// A second `dibs run` of the same lock, tried every 50 ms until it wins (40 s at most);
    /// its command writes the time it starts.
    pub fn second(&self, uri: &str) -> Second {
        let (uri, lock, out) = (uri.to_owned(), self.name.clone(), self.second_out());
        let thread = thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(40);
            let script = format!("date +%s%N > '{}'", out.display());
            loop {
                let ran = Command::new(env!("CARGO_BIN_EXE_dibs"))
                    .args(["run", "--redis", &uri, "--lock", &lock, "--at-most", "10s"])
                    .args(["--skip-exit", "99", "--", "sh", "-c", &script])
                    .output()
                    .unwrap();
                match ran.status.code() {
                    Some(0) => break,
                    Some(99) => {}
                    _ => panic!("the second run: {}", text(&ran.stderr)),
                }
                assert!(Instant::now() < deadline, "the second run never won");
                thread::sleep(Duration::from_millis(50));
            }
            stamps(&out)[0]
        });
        Second(Some(thread))
    }
}

/// The second run, trying.
pub struct Second(Option<thread::JoinHandle<u128>>);

impl Second {
    /// When the second run's command started, once it has won.
    pub fn started(mut self) -> u128 {
        match self.0.take().unwrap().join() {
            Ok(at) => at,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// The pid a [`LOOP`] writing to `out` wrote once it ran; 10 s at most, where it takes some
/// 50 ms.
fn grandchild_of(out: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    let pid = out.with_extension(match out.extension() {
        Some(ext) => format!("{}.pid", ext.to_string_lossy()),
        None => "pid".to_owned(),
    });
    loop {
        if let Ok(pid) = std::fs::read_to_string(&pid) {
            return pid.trim().parse().unwrap();
        }
        assert!(Instant::now() < deadline, "{} never started", out.display());
        thread::sleep(Duration::from_millis(10));
    }
}

/// The timestamps of a file, as written.
pub fn stamps(path: &Path) -> Vec<u128> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Whether `pid` has ended (gone, or a zombie not yet reaped).
pub fn gone(pid: i32) -> bool {
    stat(pid).is_none_or(|fields| fields[0] == "Z")
}

/// The parent of `pid` (0 once it has ended).
pub fn parent_of(pid: i32) -> i32 {
    stat(pid).map_or(0, |fields| fields[1].parse().unwrap())
}

/// The children of `pid`, from /proc.
pub fn children_of(pid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&child| parent_of(child) == pid)
        .collect()
}

/// The watchdog of `dibs run` `dibs`: its child that leads a process group (CMD's), if any.
pub fn watchdog_of(dibs: i32) -> Option<i32> {
    children_of(dibs)
        .into_iter()
        .find(|&child| stat(child).is_some_and(|f| f[2] == child.to_string()))
}

/// The process group of `pid`.
pub fn group_of(pid: i32) -> i32 {
    stat(pid).expect("running")[2].parse().unwrap()
}

/// The fields of /proc/PID/stat after the command's name: state, ppid, pgrp, session, ...
fn stat(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(String::from).collect())
}

/// The test's verdict: once the second run has started, the grandchild `pid` has ended (it must
/// have: the first run's lock was free), and it wrote nothing after the second run's command
/// started. 10 s for it to end, where the test's stimuli end it within 2 s.
pub fn assert_ended_before(job: &Job, pid: i32, second_started: u128) {
    assert_wrote_before(job, &job.out(), pid, second_started);
}

/// [`assert_ended_before`] for the [`LOOP`] `pid` writing to `out`.
pub fn assert_wrote_before(job: &Job, out: &Path, pid: i32, second_started: u128) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !gone(pid) {
        assert!(
            Instant::now() < deadline,
            "{}: the grandchild {pid} ({}) still runs 10 s after a second run took the lock",
            job.name,
            out.display()
        );
        thread::sleep(Duration::from_millis(20));
    }
    let stamps = stamps(out);
    let last = *stamps.last().expect("the grandchild wrote");
    let after = stamps.iter().filter(|&&s| s > second_started).count();
    assert!(
        last < second_started,
        "{}: the grandchild {pid} wrote {after} times to {} after the second run started ({} ms \
         after)",
        job.name,
        out.display(),
        (last - second_started) / 1_000_000
    );
}
