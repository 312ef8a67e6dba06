//! The `dibs` command line's integration tests, linked once as one program, a module a subject;
//! they run the built `dibs` against servers they start on free loopback ports.

#[path = "../../../../tests/it/common/mod.rs"]
mod common;
mod support;

mod cli_history;
mod cli_locks;
mod cli_run;
mod cli_usage;
mod resolution;
mod run_descendants;
mod run_lost;
mod run_no_cgroup;
mod run_signals;
mod run_terminal;
