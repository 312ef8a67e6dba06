//! What dibs and its watchdog tell each other. dibs starts it as `dibs ARG SETUP... -- CMD...`;
//! then, on the link (a socket pair), dibs sends one byte per signal to deliver (0: finish), and
//! the watchdog answers each with the same byte once it is sent; and, with `--on-lost GRACE`,
//! when the lock may lapse ([`LAPSE`]). The watchdog reports, one line each on a pipe, what dibs
//! waits for (CMD started, stopped, exited; what it left; all gone).

use std::ffi::OsString;
use std::os::fd::RawFd;

/// The first argument of a watchdog's command line, which no other use of dibs takes.
pub const ARG: &str = "--dibs-run-watchdog";

/// The byte on the link that asks the watchdog to finish: dibs ends normally. End-of-file
/// without it: dibs died.
pub const FINISH: u8 = 0;

/// The byte on the link before 8 more (little-endian): the time (CLOCK_MONOTONIC, ns) by which
/// the lock may lapse, unless dibs says a later one; [`u64::MAX`]: dibs stops CMD itself (it
/// found the lock lost). Past it, the watchdog stops CMD as `--on-lost` would: dibs did not run
/// to extend the lock or to see it lost (SIGSTOP).
pub const LAPSE: u8 = 0xfe;

/// Now, by CLOCK_MONOTONIC (one clock for every process of the host), in ns.
pub fn monotonic_ns() -> u64 {
    // SAFETY: clock_gettime(2) into a zeroed timespec of ours.
    let mut now: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// What the watchdog is given, on its command line.
#[derive(Debug, PartialEq, Eq)]
pub struct Setup {
    /// Its end of the link: requests in, answers out.
    pub link: RawFd,
    /// The write end of the reports' pipe.
    pub reports: RawFd,
    /// dibs's pid (the name of CMD's cgroup) and process group (never signalled).
    pub dibs: libc::pid_t,
    pub dibs_group: libc::pid_t,
    /// The terminal whose foreground CMD is to get, as dibs had it.
    pub terminal: Option<RawFd>,
    /// The signals ignored when dibs started (bit N: signal N), which CMD keeps ignored.
    pub ignored: u64,
    /// `--on-lost`'s grace in ms, with keep-alive: between the SIGTERM and the SIGKILL of a
    /// stop for a lapse.
    pub grace_ms: Option<u64>,
}

impl Setup {
    pub fn to_args(&self) -> Vec<String> {
        let terminal = self.terminal.map_or("-".to_owned(), |fd| fd.to_string());
        vec![
            format!("link={}", self.link),
            format!("reports={}", self.reports),
            format!("dibs={}", self.dibs),
            format!("dibs-group={}", self.dibs_group),
            format!("terminal={terminal}"),
            format!("ignored={:x}", self.ignored),
            format!(
                "grace={}",
                self.grace_ms.map_or("-".to_owned(), |g| g.to_string())
            ),
        ]
    }

    /// The setup, CMD and its arguments, from what follows [`ARG`].
    pub fn parse(args: &[OsString]) -> Option<(Setup, OsString, Vec<OsString>)> {
        let dash = args.iter().position(|a| a == "--")?;
        let value = |key: &str| {
            let prefix = format!("{key}=");
            args[..dash]
                .iter()
                .find_map(|a| a.to_str()?.strip_prefix(&prefix).map(str::to_owned))
        };
        let number = |key: &str| value(key)?.parse().ok();
        let terminal = match value("terminal")?.as_str() {
            "-" => None,
            fd => Some(fd.parse().ok()?),
        };
        let setup = Setup {
            link: number("link")?,
            reports: number("reports")?,
            dibs: number("dibs")?,
            dibs_group: number("dibs-group")?,
            terminal,
            ignored: u64::from_str_radix(&value("ignored")?, 16).ok()?,
            grace_ms: match value("grace")?.as_str() {
                "-" => None,
                ms => Some(ms.parse().ok()?),
            },
        };
        let (program, args) = args[dash + 1..].split_first()?;
        Some((setup, program.clone(), args.to_vec()))
    }
}

/// One line of the watchdog's to dibs.
#[derive(Debug, PartialEq, Eq)]
pub enum Report {
    /// CMD runs, with this pid.
    Started(libc::pid_t),
    /// CMD could not be run, and why.
    NotStarted(String),
    /// CMD was stopped by this signal.
    Stopped(i32),
    /// CMD exited, with this wait status.
    Exited(i32),
    /// CMD has exited, and these (the watchdog's children) run on; once.
    Left(Vec<libc::pid_t>),
    /// Nothing CMD started runs any more.
    Gone,
    /// Something dibs should say on stderr.
    Warning(String),
    /// The lock lapsed with CMD running, and the watchdog stopped it.
    Lapsed,
}

impl Report {
    pub fn line(&self) -> String {
        let one_line = |s: &str| s.replace('\n', " ");
        match self {
            Report::Started(pid) => format!("started {pid}\n"),
            Report::NotStarted(why) => format!("not-started {}\n", one_line(why)),
            Report::Stopped(signal) => format!("stopped {signal}\n"),
            Report::Exited(status) => format!("exited {status}\n"),
            Report::Left(pids) => {
                let pids: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
                format!("left {}\n", pids.join(" "))
            }
            Report::Gone => "gone\n".to_owned(),
            Report::Warning(what) => format!("warning {}\n", one_line(what)),
            Report::Lapsed => "lapsed\n".to_owned(),
        }
    }

    pub fn parse(line: &str) -> Option<Report> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        Some(match word {
            "started" => Report::Started(rest.parse().ok()?),
            "not-started" => Report::NotStarted(rest.to_owned()),
            "stopped" => Report::Stopped(rest.parse().ok()?),
            "exited" => Report::Exited(rest.parse().ok()?),
            "left" => Report::Left(
                rest.split_whitespace()
                    .map(|p| p.parse().ok())
                    .collect::<Option<_>>()?,
            ),
            "gone" => Report::Gone,
            "warning" => Report::Warning(rest.to_owned()),
            "lapsed" => Report::Lapsed,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setup_and_the_command_survive_the_command_line() {
        let setup = Setup {
            link: 5,
            reports: 7,
            dibs: 100,
            dibs_group: 90,
            terminal: Some(0),
            ignored: 1 << libc::SIGHUP,
            grace_ms: Some(1500),
        };
        let mut args: Vec<OsString> = setup.to_args().into_iter().map(OsString::from).collect();
        args.extend(["--", "sh", "-c", "x=--; echo $x"].map(OsString::from));
        let (parsed, program, rest) = Setup::parse(&args).unwrap();
        assert_eq!(parsed, setup);
        assert_eq!(program, "sh");
        assert_eq!(rest, ["-c", "x=--; echo $x"]);
        let no_terminal = Setup {
            terminal: None,
            grace_ms: None,
            ..setup
        };
        let mut args: Vec<OsString> = no_terminal.to_args().into_iter().map(Into::into).collect();
        args.extend(["--", "true"].map(OsString::from));
        assert_eq!(Setup::parse(&args).unwrap().0, no_terminal);
        assert!(Setup::parse(&["--".into(), "true".into()]).is_none());
    }

    #[test]
    fn each_report_reads_back_as_written() {
        for report in [
            Report::Started(42),
            Report::NotStarted("No such file or directory (os error 2)".into()),
            Report::Stopped(libc::SIGTSTP),
            Report::Exited(0x0f00),
            Report::Left(vec![3, 4]),
            Report::Gone,
            Report::Warning("cannot remove the cgroup x: busy".into()),
            Report::Lapsed,
        ] {
            assert_eq!(Report::parse(&report.line()), Some(report));
        }
        assert_eq!(Report::parse("nonsense 1\n"), None);
    }
}
