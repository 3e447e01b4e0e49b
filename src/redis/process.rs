//! The process of a user's Redis server, when it runs on this machine: the
//! `process_id` its `INFO server` reports, kept only when that process holds the
//! other end of sockbench's own connection (over a Unix socket, the process
//! `SO_PEERCRED` names; over TCP, the holder of the socket's other end). A server
//! in another PID or network namespace (a container), or elsewhere, is not found.
//!
//! Found, its CPU is counted as the server's; it serves others, so it is placed
//! only when `--placement` asks, and put back as it was after the run.

use super::resp::{Encoded, Reply};
use super::target::Target;
use crate::system::peers;
use crate::transport::Conn;
use std::os::fd::AsFd;

/// The server process behind `target`, or why it cannot be told.
pub fn serving(target: &Target) -> Result<u32, String> {
    let mut client = target
        .open(64 << 10)
        .map_err(|e| format!("sockbench cannot ask it ({e:#})"))?;
    client
        .send(&Encoded::new(&[b"INFO", b"server"]))
        .map_err(|e| format!("sockbench cannot ask it ({e})"))?;
    let reply = client
        .reply()
        .map_err(|e| format!("sockbench cannot ask it ({e})"))?;
    let pid = match reply {
        Reply::Bulk(text) => String::from_utf8_lossy(text)
            .lines()
            .find_map(|l| l.strip_prefix("process_id:"))
            .and_then(|v| v.trim().parse::<u32>().ok()),
        _ => None,
    }
    .ok_or("the server does not tell its process ID (INFO server)")?;
    let holds = match client.conn() {
        Conn::Unix(stream) => peers::unix_peer(stream).is_ok_and(|p| p.pid == pid),
        Conn::Tcp(stream) => at_other_end(stream, pid),
        Conn::Tls(stream) => at_other_end(stream.get_ref(), pid),
        Conn::UnixDgram(_) | Conn::Udp(_) | Conn::UdpTo(..) => false,
    };
    if holds {
        Ok(pid)
    } else {
        Err(format!(
            "the process ID it reports ({pid}) is not the process at the other end of \
             sockbench's connection on this machine (a server elsewhere, or in a container)"
        ))
    }
}

/// True when process `pid` holds the other end of the TCP connection `stream`.
fn at_other_end(stream: &std::net::TcpStream, pid: u32) -> bool {
    peers::tcp_peer_inode(stream.as_fd()).is_some_and(|inode| peers::holds(pid, inode))
}

/// The one process behind every target, or why there is none.
pub fn behind_all(targets: &[Target]) -> Result<u32, String> {
    let mut found = None;
    for target in targets {
        let pid = serving(target)?;
        match found {
            Some(other) if other != pid => {
                return Err(format!(
                    "the URLs reach two servers (processes {other} and {pid})"
                ))
            }
            _ => found = Some(pid),
        }
    }
    found.ok_or_else(|| "no URL was given".into())
}
