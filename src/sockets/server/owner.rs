//! Which process answers at a server's addresses, learned once before measuring.
//!
//! For the server sockbench starts, every address must be its child's: an abstract
//! name or a port another local account bound first would otherwise be measured in
//! its place. For a server the user names (`--server`), the process found is counted
//! and placed as the server; one that cannot be found is reported as such.

use crate::system::peers;
use crate::transport::{Address, Endpoint, SocketKind};
use std::io;

/// Who answers at one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answerer {
    /// This process listens there.
    Process(u32),
    /// A listener on this machine whose process this one may not see.
    Unseen,
    /// No listener on this machine (a server elsewhere, or none).
    Elsewhere,
}

/// Who answers at `endpoint`. Unix sockets with connections are connected to and
/// closed at once, without a byte sent; TCP listeners and UDP sockets are looked up
/// in `/proc/net`, Unix datagram sockets in `/proc/net/unix`.
pub fn answer(endpoint: &Endpoint) -> io::Result<Answerer> {
    let kind = endpoint.transport.kind();
    Ok(match &endpoint.address {
        unix if kind == SocketKind::UnixDgram => {
            let shown = match unix {
                Address::Abstract(name) => format!("@{name}"),
                other => other.to_string(),
            };
            match peers::bound_holders(&shown).first() {
                Some(holder) => Answerer::Process(holder.pid),
                None => return Err(io::Error::from(io::ErrorKind::ConnectionRefused)),
            }
        }
        _ if kind == SocketKind::UnixSeqpacket => {
            let conn =
                crate::transport::Connector::new(endpoint, crate::transport::TlsVersion::V1_3)
                    .map_err(io::Error::other)?
                    .connect()?;
            match conn {
                crate::transport::Conn::Unix(s) => Answerer::Process(peers::unix_peer(&s)?.pid),
                _ => return Err(io::Error::other("not a Unix socket")),
            }
        }
        Address::Path(path) => Answerer::Process(peers::path_listener(path)?.pid),
        Address::Abstract(name) => Answerer::Process(peers::abstract_listener(name)?.pid),
        Address::Ip(addr) => {
            let found = match kind {
                SocketKind::Udp | SocketKind::UdpUnconnected => peers::udp_servers(addr.port())?,
                _ => peers::tcp_listeners(addr.port())?,
            };
            let listener = found.into_iter().find(|l| {
                l.addr == addr.ip()
                    || (l.addr.is_unspecified() && l.addr.is_ipv4() == addr.is_ipv4())
            });
            match listener {
                None => Answerer::Elsewhere,
                Some(l) => match peers::holders(l.inode).into_iter().min() {
                    Some(pid) => Answerer::Process(pid),
                    None => Answerer::Unseen,
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
            Ok(Answerer::Process(pid)) => pid,
            Ok(Answerer::Elsewhere) => continue,
            Ok(Answerer::Unseen) => {
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

/// Who else holds the abstract names among `endpoints` (every process but `own`),
/// as one sentence saying what to do; `None` when nobody else does. An abstract
/// name can be bound by any local account: the sockbench server's is random per
/// run, so nobody can hold it ahead of time, but its command line shows it before
/// it binds.
pub fn squatted(endpoints: &[Endpoint], own: Option<u32>) -> Option<String> {
    endpoints.iter().find_map(|endpoint| {
        let Address::Abstract(name) = &endpoint.address else {
            return None;
        };
        let other = peers::abstract_holders(name)
            .into_iter()
            .find(|p| Some(p.pid) != own)?;
        Some(format!(
            "another process holds the sockbench server's address {endpoint}: process {} of \
             the account {} (uid {}), which may be squatting sockbench's names; stop that \
             process and run again (each run picks a new random name)",
            other.pid,
            crate::system::account::user_name(other.uid).unwrap_or_else(|| "unnamed".into()),
            other.uid
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Transport;
    use std::os::unix::process::CommandExt;

    /// A process of `uid` holding the abstract name `name` until dropped.
    struct NameHolder(std::process::Child);

    impl Drop for NameHolder {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn hold(name: &str, uid: u32) -> NameHolder {
        let name = name.as_bytes().to_vec();
        let mut command = std::process::Command::new("sleep");
        command.arg("30").uid(uid).gid(uid);
        // SAFETY: socket and bind are async-signal-safe, and the closure touches only
        // `name`, allocated before the fork, and a sockaddr_un on its own stack. It
        // runs after the uid change, so the socket is that account's; the descriptor
        // stays open across exec, in `sleep`.
        unsafe {
            command.pre_exec(move || {
                let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
                let mut addr: libc::sockaddr_un = std::mem::zeroed();
                addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
                for (i, b) in name.iter().enumerate() {
                    addr.sun_path[i + 1] = *b as libc::c_char;
                }
                let len = std::mem::size_of::<libc::sa_family_t>() + 1 + name.len();
                let addr_ptr = (&addr as *const libc::sockaddr_un).cast::<libc::sockaddr>();
                if fd < 0 || libc::bind(fd, addr_ptr, len as libc::socklen_t) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        NameHolder(command.spawn().expect("sleep starts"))
    }

    #[test]
    fn a_name_another_account_holds_is_said_with_its_process_and_account() {
        if crate::dir::euid() != 0 {
            eprintln!("SKIPPED a_name_another_account_holds: playing nobody needs root");
            return;
        }
        let name = format!("sockbench-owner-test-{}", std::process::id());
        let endpoint = Endpoint {
            transport: Transport::UnixAbstract,
            address: Address::Abstract(name.clone()),
        };
        assert_eq!(squatted(std::slice::from_ref(&endpoint), None), None);
        let holder = hold(&name, 65534);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let said = loop {
            let said = squatted(std::slice::from_ref(&endpoint), None);
            if said.is_some() || std::time::Instant::now() > deadline {
                break said;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let said = said.expect("the holder is found");
        let pid = holder.0.id();
        assert!(
            said.contains(&format!("process {pid} of the account ")),
            "{said}"
        );
        assert!(said.contains("(uid 65534)"), "{said}");
        assert!(said.contains(&format!("unix-abstract:{name}")), "{said}");
        assert_eq!(squatted(std::slice::from_ref(&endpoint), Some(pid)), None);
    }
}
