//! Which job a run belongs to: one rule, here, and nowhere else. The history files each run
//! under its job; the JVM's meters, expectations and fleet view ask this same function (through
//! `Dibs.jobOf`), so every signal names the same job.
//!
//! - The lock of a tick ([`crate::LockParams::for_tick`]): the job its caller named.
//! - Any other lock: its name, unless the name surely ends in a tick: a separator (`-`, `_`,
//!   `.`, `:`, `/` or `@`) followed by nothing but an ISO-8601 date or date-time of the years
//!   1900 to 2999 (`2026-12-01`, `2026-12-01T02:00`, `2026-12-01T02:00:00Z`, `20261201T0200Z`,
//!   a month `2026-12`, a week `2026-W49` or `2026W49`) or a number of 8 or more ASCII digits
//!   (an epoch second, `20261201`). Then the job is what comes before.
//!
//! Nothing else is cut: `backup-db1` is job `backup-db1`, `shard-7` is `shard-7`, `report-w49`
//! is `report-w49`, and digits of other scripts (`report-²`, `report-𝟘`) stay. A name whose
//! tick is another form says its tick with `executeOnce(job, tick, ...)` instead.

/// What may stand between a job and the tick a name ends in.
const SEPARATORS: &[u8] = b"-_.:/@";

/// The job of a lock taken without a tick: the name, less the tick it surely ends in (see the
/// module docs). Always a prefix of `name`.
pub fn job_of(name: &str) -> &str {
    split_tick(name).map_or(name, |(job, _)| job)
}

/// The jobs whose history may hold the runs of the lock `name`, the likeliest first: the job
/// [`job_of`] gives it, and for a tick's lock (`job@tick`, whose tick holds no `@`) the job before
/// its last `@`. Neither `name` itself nor an empty job is among them.
pub(crate) fn jobs_of_lock(name: &str) -> Vec<&str> {
    let mut jobs = vec![job_of(name)];
    jobs.extend(name.rsplit_once('@').map(|(job, _)| job));
    jobs.retain(|job| *job != name && !job.is_empty());
    jobs.dedup();
    jobs
}

/// The job and the tick of a name that surely ends in a tick, the longest such tick; `None`
/// for any other name.
pub fn split_tick(name: &str) -> Option<(&str, &str)> {
    let bytes = name.as_bytes();
    // A split only after an ASCII separator, so at a char boundary, and with a job before it.
    (2..bytes.len())
        .filter(|&i| SEPARATORS.contains(&bytes[i - 1]) && is_tick(&bytes[i..]))
        .map(|i| (&name[..i - 1], &name[i..]))
        .next()
}

/// Whether `text` is wholly a tick: 8 or more digits, or an ISO-8601 date or date-time (see the
/// module docs).
fn is_tick(text: &[u8]) -> bool {
    if text.len() >= 8 && text.iter().all(u8::is_ascii_digit) {
        return true;
    }
    let mut at = Cursor { text, at: 0 };
    if !at.number(4, 1900..=2999) {
        return false;
    }
    let extended = at.eat(b'-');
    if at.eat(b'W') {
        // A week, and maybe its day: 2026-W49, 2026-W49-3, 2026W49, 2026W493.
        return at.number(2, 1..=53)
            && (at.at == text.len() || ((!extended || at.eat(b'-')) && at.number(1, 1..=7)))
            && at.at == text.len();
    }
    let day = if extended {
        at.number(2, 1..=12) && (at.at == text.len() || (at.eat(b'-') && at.number(2, 1..=31)))
    } else {
        at.number(2, 1..=12) && at.number(2, 1..=31)
    };
    if !day {
        return false;
    }
    if at.at < text.len() && (at.eat(b'T') || at.eat(b't')) {
        // The time in the date's own format: 2026-12-01T02:00, 20261201T0200.
        if !at.time(extended) {
            return false;
        }
        at.zone();
    }
    at.at == text.len()
}

/// A reader of one tick's bytes.
struct Cursor<'t> {
    text: &'t [u8],
    at: usize,
}

impl Cursor<'_> {
    fn eat(&mut self, b: u8) -> bool {
        let hit = self.text.get(self.at) == Some(&b);
        self.at += usize::from(hit);
        hit
    }

    /// `n` digits as a number, within `range`; the cursor moves only when they are.
    fn number(&mut self, n: usize, range: std::ops::RangeInclusive<u32>) -> bool {
        let Some(digits) = self.text.get(self.at..self.at + n) else {
            return false;
        };
        if !digits.iter().all(u8::is_ascii_digit) {
            return false;
        }
        let value = digits
            .iter()
            .fold(0u32, |v, d| v * 10 + u32::from(d - b'0'));
        if !range.contains(&value) {
            return false;
        }
        self.at += n;
        true
    }

    /// `hh[:mm[:ss[.fff]]]`, or without the colons (`hh[mm[ss[.fff]]]`).
    fn time(&mut self, colons: bool) -> bool {
        if !self.number(2, 0..=24) {
            return false;
        }
        // Minutes, then seconds: each optional, but "02:" is no time.
        for limit in [59, 60] {
            if colons && !self.eat(b':') {
                return true;
            }
            if !self.number(2, 0..=limit) {
                return !colons;
            }
        }
        if self.eat(b'.') || self.eat(b',') {
            let digits = self.text[self.at..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            self.at += digits;
            return digits > 0;
        }
        true
    }

    /// `Z`, or `+hh[[:]mm]` / `-hh[[:]mm]`; optional.
    fn zone(&mut self) {
        if self.eat(b'Z') || self.eat(b'z') {
            return;
        }
        let start = self.at;
        if !(self.eat(b'+') || self.eat(b'-')) || !self.number(2, 0..=23) {
            self.at = start;
            return;
        }
        let before_minutes = self.at;
        let colon = self.eat(b':');
        if !self.number(2, 0..=59) && colon {
            self.at = before_minutes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_surely_end_in_a_tick_are_cut_there() {
        for (name, job) in [
            ("report-2026-12-01", "report"),
            ("nightly-report-2026-12-01T02:00", "nightly-report"),
            ("nightly-report@2026-12-02T02:00", "nightly-report"),
            ("nightly-report@2026-12-02T02:00:00.250Z", "nightly-report"),
            ("report@2026-12-02T02:00+01:00", "report"),
            ("report@2026-12-02t02:00z", "report"),
            ("report_20261201T020000Z", "report"),
            ("tick-1764547200", "tick"),
            ("tick-1764547200123", "tick"),
            ("sync_20261201", "sync"),
            ("a.b:c/d-2026-12-01", "a.b:c/d"),
            ("Bericht für März-2026-12-01", "Bericht für März"),
            ("job-20261201-20261202", "job-20261201"),
            ("cleanup-2026-12-01T03", "cleanup"),
            ("billing.invoice_run:2026W48", "billing.invoice_run"),
            ("billing-2026-W48", "billing"),
            ("billing-2026-W48-3", "billing"),
            ("monthly-2026-12", "monthly"),
        ] {
            assert_eq!(job_of(name), job, "{name}");
            assert_eq!(split_tick(name).map(|(j, _)| j), Some(job), "{name}");
        }
        assert_eq!(
            split_tick("nightly-report@2026-12-02T02:00"),
            Some(("nightly-report", "2026-12-02T02:00"))
        );
    }

    #[test]
    fn every_other_name_is_its_own_job() {
        for name in [
            "backup-db1",
            "backup-db2",
            "shard-7",
            "s3-sync",
            "nightly-report",
            "report-w49",
            "x-1234567",
            "job-12345-7",
            "report-2026-13-01",
            "report-2026-12-32",
            "report-2026-12-01-eu",
            "report-2026-12-01T25:00",
            "report-2026-12-01T02:",
            "report-2026-12-01T",
            "report-2026-12-01T02:00Zx",
            "report-2026-12-01T0200",
            "report-2026-12-",
            "report-2026-W54",
            "report-2026W48-3",
            "report-0042-12-01",
            "report-3026-12-01",
            "report-2026",
            "report-²",
            "report-Ⅻ",
            "report-𝟘",
            "report-١٢٣٤٥٦٧٨",
            "2026-12-01",
            "20261201",
            "-20261201",
            "€€€-1",
            "日本語のジョブ -28102-130",
            "report-",
            "",
        ] {
            assert_eq!(job_of(name), name, "{name}");
            assert_eq!(split_tick(name), None, "{name}");
        }
    }
}
