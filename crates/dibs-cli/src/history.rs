//! `dibs history`: a job's last runs, or a lock's: when, where, how they ended.

use std::time::Duration;

use dibs::Error;

use crate::cli::HistoryArgs;
use crate::connect::locker;
use crate::output::{evicted, human, instance, print_table, say, subject, task_word, utc};

pub fn history(args: HistoryArgs) -> Result<u8, Error> {
    let HistoryArgs { conn, job, limit } = args;
    let history = locker(&conn, false)?.history(&job, limit)?;
    let subject = subject(&job, &history.matched);
    if history.runs.is_empty() {
        say!(
            "no run of job or lock '{job}' is recorded{}",
            evicted(&history)
        );
        return Ok(0);
    }
    say!(
        "{subject}: the last {} recorded, newest first",
        history.runs.len()
    );
    let mut rows = vec![
        ["RECORDED (UTC)", "NAME", "INSTANCE", "TOOK", "TASK", "LOCK"]
            .map(str::to_owned)
            .to_vec(),
    ];
    rows.extend(history.runs.iter().map(|run| {
        vec![
            utc(run.recorded_at_unix_ms),
            run.name.clone(),
            instance(run),
            match run.task {
                None => "-".to_owned(),
                Some(_) => human(Duration::from_millis(run.duration_ms)),
            },
            // A tick no instance ran in its time, run later: said beside how its task ended.
            match (run.task.map_or("-", task_word), run.catch_up) {
                (task, true) => format!("{task} (catch-up)"),
                (task, false) => task.to_owned(),
            },
            match &run.forced_by {
                Some(by) => format!("forced by {by}"),
                None => run.ended.to_string(),
            },
        ]
    }));
    print_table(&rows);
    Ok(0)
}
