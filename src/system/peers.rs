//! Who answers on a local socket: the process behind a Unix socket (`SO_PEERCRED`)
//! and the owners of the TCP listeners on a port (`/proc/net/tcp`, `/proc/net/tcp6`
//! and the descriptors in `/proc/PID/fd`).
//!
//! A server's port and abstract socket name can be known to other accounts before
//! the server binds them, so another local account may bind them first. Whoever
//! makes a server reachable by a name it cannot make private checks with these that
//! its own server answers, once, before measuring and before sending any secret.

use std::io;
use std::net::IpAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixStream};
use std::path::Path;

/// The process at the other end of a Unix socket: for a listening server, the
/// process that called `listen` and its account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub pid: u32,
    pub uid: u32,
}

/// The peer of a connected Unix socket.
pub fn unix_peer(stream: &UnixStream) -> io::Result<Peer> {
    socket_peer(stream.as_fd())
}

/// The peer of a connected Unix socket held by its descriptor (a library's socket,
/// such as libpq's).
pub fn socket_peer(socket: BorrowedFd) -> io::Result<Peer> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: the descriptor is open while `socket` borrows it; `cred` and `len` are valid
    // places of the sizes given, as SO_PEERCRED requires.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Peer {
        pid: cred.pid as u32,
        uid: cred.uid,
    })
}

/// Who listens on the abstract socket `name` (without `@`). Connects and closes
/// without sending anything.
pub fn abstract_listener(name: &str) -> io::Result<Peer> {
    let addr = SocketAddr::from_abstract_name(name.as_bytes())?;
    unix_peer(&UnixStream::connect_addr(&addr)?)
}

/// Every process holding a socket bound to the abstract name `name` (without `@`),
/// listening or not, with the account it runs as: from `/proc/net/unix` and the
/// descriptors in `/proc/PID/fd` (only processes whose descriptors this one may
/// read are seen).
pub fn abstract_holders(name: &str) -> Vec<Peer> {
    bound_holders(&format!("@{name}"))
}

/// Every process holding a Unix socket bound to `shown`, as `/proc/net/unix`
/// shows its address (a path, or `@` and an abstract name), of any type: the
/// holders of a datagram socket, which has no listener to connect to.
pub fn bound_holders(shown: &str) -> Vec<Peer> {
    let Ok(table) = std::fs::read_to_string("/proc/net/unix") else {
        return Vec::new();
    };
    let mut found: Vec<Peer> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            // Num RefCount Protocol Flags Type St Inode Path
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.get(7) == Some(&shown)).then(|| fields[6].parse::<u64>().ok())?
        })
        .flat_map(holders)
        .filter_map(|pid| {
            let uid = std::os::unix::fs::MetadataExt::uid(
                &std::fs::metadata(format!("/proc/{pid}")).ok()?,
            );
            Some(Peer { pid, uid })
        })
        .collect();
    found.sort_by_key(|p| p.pid);
    found.dedup();
    found
}

/// Who listens on the Unix socket at `path`. Connects and closes without sending
/// anything.
pub fn path_listener(path: &Path) -> io::Result<Peer> {
    unix_peer(&UnixStream::connect(path)?)
}

/// One listening TCP socket as `/proc/net/tcp*` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpListener {
    pub addr: IpAddr,
    pub port: u16,
    pub uid: u32,
    pub inode: u64,
}

/// Every TCP socket listening on `port`, on any address (IPv4 and IPv6).
pub fn tcp_listeners(port: u16) -> io::Result<Vec<TcpListener>> {
    let mut all = all_tcp_listeners()?;
    all.retain(|l| l.port == port);
    Ok(all)
}

/// Every listening TCP socket of this network namespace (IPv4 and IPv6).
pub fn all_tcp_listeners() -> io::Result<Vec<TcpListener>> {
    listeners_in(Path::new("/proc/net"))
}

/// Every listening TCP socket of the network namespace process `pid` is in (one
/// of a container's, which `/proc/net` of this process does not show).
pub fn tcp_listeners_of(pid: u32) -> io::Result<Vec<TcpListener>> {
    listeners_in(&Path::new("/proc").join(pid.to_string()).join("net"))
}

/// The listening sockets of the tables `tcp` and `tcp6` in `net`, a `/proc`
/// directory of one network namespace.
fn listeners_in(net: &Path) -> io::Result<Vec<TcpListener>> {
    sockets_in(net, "tcp", LISTENING)
}

/// Every UDP socket bound to `port` with no peer (a server's), on any address:
/// from `/proc/net/udp` and `udp6`, in the same form as a TCP listener.
pub fn udp_servers(port: u16) -> io::Result<Vec<TcpListener>> {
    let mut all = sockets_in(Path::new("/proc/net"), "udp", UNCONNECTED)?;
    all.retain(|l| l.port == port);
    Ok(all)
}

/// The account of the UDP socket bound to `addr` on this machine, connected to a
/// peer or not; `None` when none is seen.
pub fn udp_owner(addr: std::net::SocketAddr) -> Option<u32> {
    [UNCONNECTED, CONNECTED]
        .into_iter()
        .flat_map(|state| sockets_in(Path::new("/proc/net"), "udp", state).unwrap_or_default())
        .find(|s| s.port == addr.port() && (s.addr == addr.ip() || s.addr.is_unspecified()))
        .map(|s| s.uid)
}

/// The states `/proc/net` shows of a listening TCP socket, of a UDP socket with
/// no peer, and of one connected to a peer.
const LISTENING: &str = "0A";
const UNCONNECTED: &str = "07";
const CONNECTED: &str = "01";

/// The sockets in state `state` of the tables `table` and `table6` in `net`.
fn sockets_in(net: &Path, table: &str, state: &str) -> io::Result<Vec<TcpListener>> {
    let mut all = parse_proc_net(&std::fs::read_to_string(net.join(table))?, state);
    // A kernel without IPv6 has no table of it: no IPv6 sockets then.
    if let Ok(text) = std::fs::read_to_string(net.join(format!("{table}6"))) {
        all.extend(parse_proc_net(&text, state));
    }
    Ok(all)
}

/// The sockets in state `state` of a `/proc/net/tcp`, `tcp6`, `udp` or `udp6`
/// table.
fn parse_proc_net(text: &str, state: &str) -> Vec<TcpListener> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
            if fields.len() < 10 || fields[3] != state {
                return None;
            }
            let (addr, port) = fields[1].split_once(':')?;
            Some(TcpListener {
                addr: parse_address(addr)?,
                port: u16::from_str_radix(port, 16).ok()?,
                uid: fields[7].parse().ok()?,
                inode: fields[9].parse().ok()?,
            })
        })
        .collect()
}

/// An address as the kernel prints it: 32-bit words in hexadecimal, each in the
/// machine's byte order.
pub(super) fn parse_address(hex: &str) -> Option<IpAddr> {
    let mut bytes = Vec::with_capacity(16);
    for i in (0..hex.len()).step_by(8) {
        let word = u32::from_str_radix(hex.get(i..i + 8)?, 16).ok()?;
        bytes.extend_from_slice(&word.to_ne_bytes());
    }
    match bytes.len() {
        4 => Some(IpAddr::from(<[u8; 4]>::try_from(bytes).ok()?)),
        16 => Some(IpAddr::from(<[u8; 16]>::try_from(bytes).ok()?)),
        _ => None,
    }
}

/// The inode of the socket at the other end of a connected TCP socket on this
/// machine (a loopback connection): the row of `/proc/net/tcp*` whose local
/// address is this socket's peer and whose remote address is this socket's own.
/// `None` when no such row is seen (the other end is elsewhere, or in another
/// network namespace).
pub fn tcp_peer_inode(socket: BorrowedFd) -> Option<u64> {
    let own = socket_address(socket, libc::getsockname)?;
    let peer = socket_address(socket, libc::getpeername)?;
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .flat_map(|text| {
            text.lines()
                .skip(1)
                .filter_map(|line| {
                    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    let address = |field: &str| {
                        let (addr, port) = field.split_once(':')?;
                        Some(std::net::SocketAddr::new(
                            parse_address(addr)?,
                            u16::from_str_radix(port, 16).ok()?,
                        ))
                    };
                    let (local, remote) = (address(fields.get(1)?)?, address(fields.get(2)?)?);
                    (local == peer && remote == own).then(|| fields.get(9)?.parse().ok())?
                })
                .collect::<Vec<u64>>()
        })
        .find(|&inode| inode != 0)
}

/// The address `get` (`getsockname` or `getpeername`) gives for an IPv4 or IPv6
/// socket.
fn socket_address(
    socket: BorrowedFd,
    get: unsafe extern "C" fn(
        libc::c_int,
        *mut libc::sockaddr,
        *mut libc::socklen_t,
    ) -> libc::c_int,
) -> Option<std::net::SocketAddr> {
    // SAFETY: an all-zero sockaddr_storage is a valid value of this plain C struct.
    let mut address: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut length = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: the descriptor is open while `socket` borrows it; `address` and
    // `length` are valid for writing, `length` holding the size of `address`.
    let rc = unsafe {
        get(
            socket.as_raw_fd(),
            (&mut address as *mut libc::sockaddr_storage).cast(),
            &mut length,
        )
    };
    if rc != 0 {
        return None;
    }
    match libc::c_int::from(address.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let a: libc::sockaddr_in =
                unsafe { std::ptr::read((&address as *const libc::sockaddr_storage).cast()) };
            let ip = std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
            Some(std::net::SocketAddr::new(
                ip.into(),
                u16::from_be(a.sin_port),
            ))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let a: libc::sockaddr_in6 =
                unsafe { std::ptr::read((&address as *const libc::sockaddr_storage).cast()) };
            let ip = std::net::Ipv6Addr::from(a.sin6_addr.s6_addr);
            Some(std::net::SocketAddr::new(
                ip.into(),
                u16::from_be(a.sin6_port),
            ))
        }
        _ => None,
    }
}

/// The listeners on `port` that a connection to loopback can reach (on a loopback
/// address or on every address), and the first of them that is not process `pid`
/// running as `uid`: a server's port must be its own before a password goes there.
pub fn loopback_listeners(
    port: u16,
    pid: u32,
    uid: u32,
) -> io::Result<(Vec<TcpListener>, Option<TcpListener>)> {
    let listeners: Vec<TcpListener> = tcp_listeners(port)?
        .into_iter()
        .filter(|l| l.addr.is_unspecified() || l.addr.is_loopback())
        .collect();
    let foreign = listeners
        .iter()
        .find(|l| l.uid != uid || !holds(pid, l.inode))
        .cloned();
    Ok((listeners, foreign))
}

/// True when process `pid` has the socket `inode` open.
pub fn holds(pid: u32, inode: u64) -> bool {
    let wanted = format!("socket:[{inode}]");
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == Path::new(&wanted)))
}

/// The processes that have the socket `inode` open (a listener is shared by the
/// processes that inherited it). Only processes whose descriptors this one may read
/// are seen.
pub fn holders(inode: u64) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| holds(pid, inode))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn listeners_are_read_from_the_kernel_tables() {
        let v4 = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
                  0: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   108        0 4242 1 0 100 0 0 10 0\n   \
                  1: 0100007F:1538 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000   108        0 4243 1 0 20 4 30 10 -1\n";
        let found = parse_proc_net(v4, LISTENING);
        assert_eq!(
            found,
            vec![TcpListener {
                addr: IpAddr::V4(Ipv4Addr::LOCALHOST),
                port: 0x1538,
                uid: 108,
                inode: 4242,
            }]
        );
        let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
                  0: 00000000000000000000000001000000:1538 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000    65534        0 77 1 0 100 0 0 10 0\n";
        assert_eq!(
            parse_proc_net(v6, LISTENING)[0].addr,
            IpAddr::V6(Ipv6Addr::LOCALHOST)
        );
        assert_eq!(parse_proc_net(v6, LISTENING)[0].uid, 65534);
    }

    #[test]
    fn a_listener_of_this_process_is_found_and_its_owner_known() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let found = tcp_listeners(port).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        // SAFETY: geteuid has no preconditions.
        assert_eq!(found[0].uid, unsafe { libc::geteuid() });
        assert!(holds(std::process::id(), found[0].inode));
        assert!(holders(found[0].inode).contains(&std::process::id()));
    }

    #[test]
    fn the_other_end_of_a_loopback_connection_is_found() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let inode = tcp_peer_inode(client.as_fd()).expect("the accepted socket's row");
        let accepted_inode =
            std::fs::read_link(format!("/proc/self/fd/{}", accepted.as_raw_fd())).unwrap();
        assert_eq!(accepted_inode, Path::new(&format!("socket:[{inode}]")));
        assert!(holds(std::process::id(), inode));
    }

    #[test]
    fn an_abstract_listener_names_its_process() {
        let name = format!("sockbench-peers-test-{}", std::process::id());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let _listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        let peer = abstract_listener(&name).unwrap();
        assert_eq!(peer.pid, std::process::id());
    }
}
