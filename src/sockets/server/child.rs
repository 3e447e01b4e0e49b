//! The server as a separate process, started and stopped by the client side.
//!
//! Measuring against a server in another process is what makes the figures real:
//! client and server are scheduled apart, as an application and its database are.
//! The child is this same binary re-executed as `sockbench serve`; it reports the
//! addresses it bound on stdout, dies with its parent (`PR_SET_PDEATHSIG`) and is
//! stopped by PID when the client is done. Its unix socket lives in a private
//! (0700) temporary directory that goes away with it.

use super::protocol::Secret;
use crate::container::Shared;
use crate::transport::{Address, Endpoint, Transport, MAX_UNIX_PATH};
use anyhow::{anyhow, bail, Context, Result};
use std::io::Write;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long the child may take to bind and report ready (TLS key generation included).
const READY_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the child may take to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);

/// A running sockbench server child process.
pub struct ServerProcess {
    child: Child,
    /// What its datagram clients carry (`server/protocol.rs`).
    secret: Secret,
    endpoints: Vec<Endpoint>,
    /// The directory's mount in a container, undone before the directory goes
    /// when the server fails to start there (on the container's thread).
    shared: Option<Shared>,
    _dir: crate::leftovers::PrivateDir,
}

impl ServerProcess {
    /// The server's process id, for its CPU counters and placement.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The secret its datagram clients carry.
    pub fn secret(&self) -> Secret {
        self.secret
    }

    /// Starts a server listening on a fresh local address for each transport.
    pub fn start(transports: &[Transport]) -> Result<ServerProcess> {
        let dir = crate::leftovers::private_dir(crate::sockets::family::SERVER.prefix)?;
        let unique = random_name();
        let asked: Vec<Endpoint> = transports
            .iter()
            .map(|t| t.local_endpoint(dir.path(), &unique))
            .collect();
        ServerProcess::spawn(dir, None, asked, Answering::Checked)
    }

    /// Starts a server in a container, on the calling thread, which must be the
    /// container's (`crate::container::Network::inside`): on each of `tcp`, the
    /// container's addresses, and with `unix` on a Unix socket in a private
    /// directory shared into it (`unix-shared`).
    pub fn start_inside(tcp: &[SocketAddr], unix: bool) -> Result<ServerProcess> {
        let dir = crate::leftovers::private_dir(crate::sockets::family::SERVER.prefix)?;
        let mut asked: Vec<Endpoint> = tcp
            .iter()
            .map(|&a| Endpoint {
                transport: Transport::Tcp,
                address: Address::Ip(a),
            })
            .collect();
        let shared = match unix {
            true => Some(crate::container::share_here(dir.path())?),
            false => None,
        };
        if unix {
            asked.push(Transport::Unix.local_endpoint(dir.path(), ""));
        }
        // Nothing but sockbench's own processes is in the container's network, and
        // the Unix socket's directory is root's: no other account can answer there.
        let mut server = ServerProcess::spawn(dir, shared, asked, Answering::Private)?;
        if let Some(shared) = server.shared.take() {
            shared.keep();
        }
        Ok(server)
    }

    /// Starts the child listening on `asked`, in private directory `dir`.
    fn spawn(
        dir: crate::leftovers::PrivateDir,
        shared: Option<Shared>,
        asked: Vec<Endpoint>,
        answering: Answering,
    ) -> Result<ServerProcess> {
        if let Some(long) = asked
            .iter()
            .filter_map(Endpoint::path)
            .find(|p| p.as_os_str().len() > MAX_UNIX_PATH)
        {
            // The mount first: a mount point cannot be removed.
            drop(shared);
            drop(dir);
            return Err(crate::error::usage(format!(
                "the temporary directory {} is too long for the sockbench server's Unix socket \
                 path ({} bytes, at most {MAX_UNIX_PATH}); set TMPDIR to a shorter directory \
                 such as /tmp",
                std::env::temp_dir().display(),
                long.as_os_str().len()
            )));
        }
        let exe = std::env::current_exe().context("cannot find the sockbench binary")?;
        let mut command = Command::new(&exe);
        command.arg("serve").arg("--secret-on-stdin");
        for endpoint in &asked {
            command.arg("--listen").arg(endpoint.to_string());
        }
        // Like every server sockbench starts, with an empty environment.
        command
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        crate::subprocess::tie_to_parent(&mut command, libc::SIGKILL);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                drop(shared);
                drop(dir);
                return Err(e).with_context(|| {
                    format!("cannot start the sockbench server ({})", exe.display())
                });
            }
        };
        // Over a pipe, where no other account reads it (unlike the arguments).
        let secret = Secret::random();
        let told = child
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(format!("{}\n", secret.to_hex()).as_bytes());
        let stderr_tail =
            crate::subprocess::forward_stderr(child.stderr.take().expect("stderr is piped"));
        let lines = crate::subprocess::read_lines(child.stdout.take().expect("stdout is piped"));
        let mut server = ServerProcess {
            child,
            secret,
            endpoints: Vec::new(),
            shared,
            _dir: dir,
        };
        let ready = told
            .context("cannot give the sockbench server its secret")
            .and_then(|()| {
                crate::subprocess::wait_ready(&lines, "the sockbench server", READY_TIMEOUT)
            });
        let parsed = ready.and_then(|addrs| {
            addrs
                .iter()
                .map(|a| a.parse().map_err(|e: String| anyhow!(e)))
                .collect::<Result<Vec<Endpoint>>>()
        });
        match parsed {
            Ok(endpoints) if answering == Answering::Private => {
                server.endpoints = endpoints;
                Ok(server)
            }
            Ok(endpoints) => {
                // Once, before measuring: every address is the child's own.
                let own = Some(server.pid());
                if let Some(squatted) = super::owner::squatted(&endpoints, own) {
                    bail!(squatted);
                }
                match super::owner::server_process(&endpoints) {
                    Ok(Some(pid)) if pid == server.pid() => {}
                    Ok(other) => bail!(
                        "another process ({}) answers at the sockbench server's addresses; \
                         another local account may have bound one first",
                        other.map_or("unknown".into(), |p| p.to_string())
                    ),
                    Err(why) => bail!("cannot check who answers at the sockbench server: {why}"),
                }
                server.endpoints = endpoints;
                Ok(server)
            }
            Err(e) => {
                server.stop();
                // A name taken between the command line and the bind.
                if let Some(squatted) = super::owner::squatted(&asked, None) {
                    bail!(squatted);
                }
                let tail = stderr_tail.recv_timeout(STOP_TIMEOUT).unwrap_or_default();
                Err(match tail.trim() {
                    "" => e,
                    tail => anyhow!("{e}: {}", tail.lines().collect::<Vec<_>>().join("; ")),
                })
            }
        }
    }

    /// The addresses the server really listens on, one per transport asked for.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// Sends SIGTERM to the child (by its PID), waits briefly, then SIGKILL. A child
    /// that was stopped (a stall the watchdog had not yet seen when Ctrl-C ended the
    /// trial) is continued first, or it would hold SIGTERM until SIGKILL.
    pub fn stop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            // SAFETY: a plain syscall on sockbench's own child, not yet reaped, so
            // its PID cannot have been reused.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGCONT) };
        }
        crate::subprocess::stop(&mut self.child, &[(libc::SIGTERM, STOP_TIMEOUT)]);
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether another account could answer where the child listens, so that who
/// holds each address is checked once it is ready.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answering {
    Checked,
    Private,
}

/// What makes the server's abstract name its own: 128 random bits, so no other
/// account can bind it ahead of the run.
fn random_name() -> String {
    let mut bytes = [0u8; 16];
    openssl::rand::rand_bytes(&mut bytes).expect("OpenSSL's random generator works");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abstract_names_are_random_and_say_nothing_of_the_run() {
        let (a, b) = (random_name(), random_name());
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
    }
}
