//! What the registry composes from the sockets family besides its command: its
//! quick plan for `sockbench run` and the directory of its server.

use super::args::SocketsArgs;
use super::plan::SocketsPlan;
use crate::leftovers::DirKind;
use crate::plan::Measuring;
use crate::report::family::Plan;
use anyhow::Result;

/// `sockets --quick` with round trips at the smallest and largest sizes alone (to
/// keep `run` within its two minutes): always part of `run`, as its server is
/// sockbench itself.
pub fn quick(_run: &clap::ArgMatches) -> Result<Option<Box<dyn Plan>>> {
    let plan = SocketsPlan::from_args(&SocketsArgs {
        measuring: Measuring::quick(),
        sizes: Some(vec!["64".into(), "64KiB".into()]),
        ..SocketsArgs::default()
    })?;
    Ok(Some(Box::new(plan)))
}

/// The server child's directory (`server/child.rs`), for its Unix sockets. The
/// child dies with the sockbench process that started it, so no server outlives
/// its owner there.
pub const SERVER: DirKind = DirKind {
    prefix: "sockbench-srv-",
};
