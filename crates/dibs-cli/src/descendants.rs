//! Everything `dibs run`'s command started, whichever group or session it went to: the watchdog
//! (CMD's parent) is made their subreaper, and dibs too, under it, so that what their parents
//! leave behind becomes the watchdog's child (dibs's, if the watchdog died); a signal goes to
//! each of their process groups once; and the lock waits until none is left.
//!
//! Linux's `/proc` tells the tree. Elsewhere the tree is unknown, and only CMD's own group (which
//! [`crate::watchdog`] keeps) is signalled and waited for.

use std::collections::{BTreeSet, HashMap};
use std::io;

/// Makes orphaned descendants (a daemon whose parent exited, what bash leaves running) children
/// of the caller, rather than of init: it can then wait for them, find them to signal, and
/// find them to kill once dibs is gone.
pub fn become_subreaper() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(2) with an integer option.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sends `signal` to every process group a descendant of dibs is in now, once each, and to
/// `pinned` (CMD's group, while the watchdog that leads it is unreaped); never to dibs's own
/// group, which whoever signalled it reached already. Dibs does this itself only once its
/// watchdog has died (a `kill -9` to CMD's group); before, the watchdog does it
/// ([`crate::watchdog`]).
///
/// Only a group seen with a descendant in it is signalled, never an id remembered: once its last
/// member is reaped, a group's id may be any process's. The caller holds the lock under which
/// dibs reaps its children ([`crate::signals::Forwarder::reap`]), so a group with a child of dibs
/// in it (CMD's, the watchdog's, a daemon's) stays in being until it is signalled. A group of
/// deeper descendants alone could end and its id be taken again between the read of /proc and
/// the kill, a window of microseconds that needs the pids to wrap round in it.
pub fn signal_groups(pinned: Option<libc::pid_t>, signal: i32) {
    // SAFETY: getpid and getpgrp take nothing.
    let (me, own) = unsafe { (libc::getpid(), libc::getpgrp()) };
    signal_groups_below(me, pinned, own, signal);
}

/// Sends `signal` once to each process group a descendant of `root` (the calling process, which
/// reaps its children between calls, never during one) is in, and to `pinned`; never to
/// `spared` (dibs's group).
pub fn signal_groups_below(
    root: libc::pid_t,
    pinned: Option<libc::pid_t>,
    spared: libc::pid_t,
    signal: i32,
) {
    let mut groups: BTreeSet<libc::pid_t> =
        descendants(root).into_iter().map(|p| p.group).collect();
    groups.extend(pinned);
    for group in groups {
        if group > 1 && group != spared {
            // SAFETY: kill(2) on a process group a descendant of ours is in.
            unsafe { libc::kill(-group, signal) };
        }
    }
}

/// Dibs's children: once its watchdog has died, what CMD left running, which the lock waits for.
pub fn children() -> Vec<libc::pid_t> {
    // SAFETY: getpid takes nothing.
    children_of(unsafe { libc::getpid() })
}

/// The children of `parent`, exited ones not yet reaped included. Of the caller's own, none can
/// be missed: a child is only ever made by the caller, or handed to it (a subreaper) before the
/// child it came from can be reaped.
pub fn children_of(parent: libc::pid_t) -> Vec<libc::pid_t> {
    processes()
        .into_iter()
        .filter(|p| p.parent == parent)
        .map(|p| p.pid)
        .collect()
}

struct Process {
    pid: libc::pid_t,
    parent: libc::pid_t,
    group: libc::pid_t,
}

/// The descendants of `root`, at any depth.
fn descendants(root: libc::pid_t) -> Vec<Process> {
    let mut by_parent: HashMap<libc::pid_t, Vec<Process>> = HashMap::new();
    for p in processes() {
        by_parent.entry(p.parent).or_default().push(p);
    }
    let mut next = vec![root];
    let mut found = Vec::new();
    while let Some(parent) = next.pop() {
        for child in by_parent.remove(&parent).unwrap_or_default() {
            next.push(child.pid);
            found.push(child);
        }
    }
    found
}

/// Every process /proc shows: its pid, parent and process group (none where there is no /proc).
fn processes() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
            let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace().skip(1);
            let parent = rest.next()?.parse().ok()?;
            let group = rest.next()?.parse().ok()?;
            Some(Process { pid, parent, group })
        })
        .collect()
}
