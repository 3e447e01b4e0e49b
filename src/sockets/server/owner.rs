//! Which process answers at a server's addresses, learned once before measuring.
//!
//! For the server sockbench starts, every address must be its child's: an abstract
//! name or a port another local account bound first would otherwise be measured in
//! its place. For a server the user names (`--server`), the process found is counted
//! and placed as the server; one that cannot be found is reported as such.

use crate::system::peers;
use crate::transport::{Address, Endpoint};
use std::io;

/// Who answers at one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// This process listens there.
    Process(u32),
    /// A listener on this machine whose process this one may not see.
    Unseen,
    /// No listener on this machine (a server elsewhere, or none).
    Elsewhere,
}

/// Who answers at `endpoint`. Unix sockets are connected to and closed at once,
/// without a byte sent; TCP listeners are looked up in `/proc/net`.
pub fn answer(endpoint: &Endpoint) -> io::Result<Answer> {
    Ok(match &endpoint.address {
        Address::Path(path) => Answer::Process(peers::path_listener(path)?.pid),
        Address::Abstract(name) => Answer::Process(peers::abstract_listener(name)?.pid),
        Address::Ip(addr) => {
            let listener = peers::tcp_listeners(addr.port())?.into_iter().find(|l| {
                l.addr == addr.ip()
                    || (l.addr.is_unspecified() && l.addr.is_ipv4() == addr.is_ipv4())
            });
            match listener {
                None => Answer::Elsewhere,
                Some(l) => match peers::holders(l.inode).into_iter().min() {
                    Some(pid) => Answer::Process(pid),
                    None => Answer::Unseen,
                },
            }
        }
    })
}

/// The one process that answers at every endpoint, if there is one: `Ok(None)` when
/// the server runs elsewhere; an error naming the address when a listener here
/// cannot be identified or the endpoints are held by different processes.
pub fn server_process(endpoints: &[Endpoint]) -> Result<Option<u32>, String> {
    let mut found: Option<(u32, &Endpoint)> = None;
    for endpoint in endpoints {
        let pid = match answer(endpoint) {
            Ok(Answer::Process(pid)) => pid,
            Ok(Answer::Elsewhere) => continue,
            Ok(Answer::Unseen) => {
                return Err(format!(
                    "the process listening at {endpoint} cannot be identified (it belongs to \
                     another account)"
                ))
            }
            Err(e) => return Err(format!("nothing answers at {endpoint} ({e})")),
        };
        match found {
            Some((first, at)) if first != pid => {
                return Err(format!(
                    "different processes listen at {at} ({first}) and {endpoint} ({pid})"
                ))
            }
            _ => found = Some((pid, endpoint)),
        }
    }
    Ok(found.map(|(pid, _)| pid))
}
