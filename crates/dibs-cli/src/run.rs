//! `dibs run`: takes the lock, runs the command if it won, releases the lock when it and all it
//! started have exited.

use dibs::{Acquire, Error, LockParams, TaskResult};

use crate::child::run_child;
use crate::cli::{OnLost, RunArgs};
use crate::connect::locker;
use crate::descendants::become_subreaper;
use crate::output::tell;
use crate::signals::{Forwarder, LossStop};
use crate::{EX_LOST, EX_SOFTWARE, EX_UNAVAILABLE};

/// The command's exit code; the skip code when another holder has the lock; [`EX_LOST`] when
/// the command was stopped for a lost lock.
pub fn run(args: RunArgs) -> Result<u8, Error> {
    let RunArgs {
        conn,
        lock,
        at_most,
        at_least,
        tick,
        keep_alive,
        on_lost,
        skip_exit,
        command,
    } = args;
    let (program, args) = command
        .split_first()
        .expect("clap requires a command after --");
    let params = match &tick {
        Some(tick) => LockParams::for_tick(&lock, tick, millis(at_most), 1)?,
        None => LockParams::from_millis(&lock, millis(at_most), millis(at_least))?,
    };
    let locker = locker(&conn, keep_alive)?;
    // What CMD leaves running becomes its watchdog's child, or dibs's should the watchdog die (a
    // `kill -9` to CMD's group), to be waited for before the release.
    if let Err(e) = become_subreaper() {
        tell!("dibs: cannot become the subreaper of {program}'s processes: {e}");
        return Ok(EX_SOFTWARE);
    }
    // Watch signals before taking the lock: one that arrives while it is being taken must not
    // kill dibs with the lock held and nothing to release it.
    let forwarder = match Forwarder::start() {
        Ok(f) => f,
        Err(e) => {
            tell!("dibs: cannot watch signals: {e}");
            return Ok(EX_SOFTWARE);
        }
    };
    let mut lease = match locker.acquire(&params) {
        Ok(Acquire::Won(lease)) => lease,
        Ok(Acquire::Unconfirmed(why)) => {
            // Won, not confirmed, given back: as a Redis that could not be used, the program
            // not run.
            forwarder.stop();
            tell!("dibs: {why}; {program} not run");
            return Ok(EX_UNAVAILABLE);
        }
        Ok(Acquire::Taken) => {
            forwarder.stop();
            match &tick {
                Some(tick) => tell!(
                    "dibs: lock '{lock}@{tick}' is held by another holder (tick '{tick}' of job \
                     '{lock}' runs or ran elsewhere); {program} not run"
                ),
                None => {
                    tell!("dibs: lock '{lock}' is held by another holder; {program} not run")
                }
            }
            return Ok(skip_exit);
        }
        Err(e) => {
            forwarder.stop();
            return Err(e);
        }
    };
    if let Some(warning) = lease.take_warning() {
        crate::output::tell!("dibs: warning: {warning}");
    }
    let stop = match on_lost {
        OnLost::Stop(grace) if keep_alive => {
            let stop = LossStop::new(grace);
            lease.when_lost(stop.teller());
            Some(stop)
        }
        OnLost::Ignore if keep_alive => {
            let (lock, program) = (lock.clone(), program.clone());
            lease.when_lost(move || {
                tell!(
                    "dibs: warning: lock '{lock}' was lost while {program} ran, and another \
                     holder may run it now; --on-lost ignore: {program} runs on"
                );
            });
            None
        }
        _ => None,
    };
    // A panic here drops the lease, which releases it.
    let safe_for = || lease.safe_for();
    let end = run_child(
        &forwarder,
        &lock,
        program,
        args,
        lease.fence(),
        stop,
        &safe_for,
    );
    let ending = lease.release_after(if end.code == 0 {
        TaskResult::Succeeded
    } else {
        TaskResult::Failed
    });
    forwarder.stop();
    if let Some(warning) = ending.warning() {
        crate::output::tell!("dibs: warning: {warning}");
    }
    Ok(if end.stopped_for_loss {
        EX_LOST
    } else {
        end.code
    })
}

fn millis(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
