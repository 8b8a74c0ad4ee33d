//! The torture suite: the `gitloom` binary under SIGKILL, concurrent writers and
//! readers, and hostile input. CI runs the short form; `GITLOOM_TORTURE=long` runs
//! the long form (hundreds of kills, 8 writers × 200 writes).

#[path = "torture/common.rs"]
mod common;
#[path = "torture/concurrency.rs"]
mod concurrency;
#[path = "torture/crash.rs"]
mod crash;
#[path = "torture/hostile.rs"]
mod hostile;
