//! The core's integration tests, linked once as one program (as ripgrep's are), a module a
//! subject. Each test starts the servers it needs on free loopback ports; `scripts/rust-tests.py`
//! runs the modules a few at a time, each module in a process of its own.

mod common;

mod catch_up;
mod cluster;
mod cluster_bounds;
mod conn;
mod conn_keys;
mod durable;
mod failover;
mod fuzz;
mod history;
mod keepalive;
mod lock;
mod lock_faults;
mod pileup;
mod sentinel;
mod tick_start;
mod tls;
