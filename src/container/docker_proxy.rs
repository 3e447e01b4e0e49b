//! `docker-proxy`: Docker's userland proxy, what `docker run -p` means for a
//! client on 127.0.0.1 under Docker's defaults. It listens on the host and copies
//! each connection to the container's address, as root, as Docker runs it.

use super::tool;
use anyhow::{bail, Context, Result};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the proxy may take to listen.
const READY: Duration = Duration::from_secs(5);

/// A running `docker-proxy`, stopped by PID on drop.
pub struct DockerProxy {
    child: Child,
    address: SocketAddr,
}

impl DockerProxy {
    /// Starts a proxy from a free port of 127.0.0.1 to `to`, and waits until it
    /// listens there itself.
    pub fn start(to: SocketAddr) -> Result<DockerProxy> {
        let program = tool::find("docker-proxy").context("docker-proxy is not installed")?;
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .context("cannot find a free port on 127.0.0.1 for docker-proxy")?
            .port();
        let mut command = Command::new(&program);
        command
            .args(["-proto", "tcp", "-host-ip", "127.0.0.1"])
            .args(["-host-port", &port.to_string()])
            .args(["-container-ip", &to.ip().to_string()])
            .args(["-container-port", &to.port().to_string()])
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // Docker hands the proxy a pipe as descriptor 3, on which it says "0" once
        // it listens (or "1" and why not); without one it writes there anyway.
        let (said, signal) = pipe().context("cannot make a pipe for docker-proxy")?;
        let signal_fd = signal.as_raw_fd();
        // SAFETY: dup2 is async-signal-safe; between fork and exec it puts the
        // pipe's end, open in the parent until spawn returns, at descriptor 3.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(signal_fd, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        crate::subprocess::tie_to_parent(&mut command, libc::SIGKILL);
        let child = command
            .spawn()
            .with_context(|| format!("cannot start {}", program.display()))?;
        drop(signal);
        let mut proxy = DockerProxy {
            child,
            address: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        };
        proxy.wait_listening(port, said)?;
        Ok(proxy)
    }

    /// Waits until the proxy holds the listening socket on `port` (another
    /// process there is an error: the connections would be its).
    fn wait_listening(&mut self, port: u16, said: std::fs::File) -> Result<()> {
        let deadline = Instant::now() + READY;
        let pid = self.child.id();
        let answer = crate::subprocess::read_lines(said);
        loop {
            if let Ok(line) = answer.try_recv() {
                if line.trim() != "0" {
                    bail!(
                        "docker-proxy could not listen: {}",
                        line.trim_start_matches('1').trim()
                    );
                }
            }
            let listeners = crate::system::peers::tcp_listeners(port).unwrap_or_default();
            if let Some(l) = listeners.first() {
                if crate::system::peers::holds(pid, l.inode) {
                    return Ok(());
                }
                bail!("another process took port {port} of 127.0.0.1 before docker-proxy");
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let mut said = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut said);
                }
                bail!(
                    "docker-proxy ended at its start ({status}): {}",
                    said.trim()
                );
            }
            if crate::interrupt::interrupted() {
                return Err(crate::error::Interrupted::default().into());
            }
            if Instant::now() >= deadline {
                bail!("docker-proxy did not listen within {} s", READY.as_secs());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// A pipe, both ends closed on exec: what to read, and where to write.
fn pipe() -> std::io::Result<(std::fs::File, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both are open descriptors owned by nothing else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    Ok((read.into(), write))
}

impl Drop for DockerProxy {
    fn drop(&mut self) {
        crate::subprocess::stop(&mut self.child, &[(libc::SIGTERM, Duration::from_secs(2))]);
    }
}
