//! sockbench's own app server as a process of its own: this binary re-executed as
//! `sockbench serve --http`, started as root so that it can bind its Unix socket
//! in a private directory that stays root's, then handing that socket to the
//! server account and running as that account (`--account`), which nginx also
//! runs as. It reports the addresses it bound on stdout, dies with sockbench
//! (`PR_SET_PDEATHSIG`), and is stopped by its PID; its directory records it for
//! the leftover sweep and goes with it.

use crate::leftovers::PrivateDir;
use crate::system::account::Account;
use crate::transport::{Endpoint, Transport, MAX_UNIX_PATH};
use anyhow::{anyhow, bail, Context, Result};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long the app server may take to bind and report ready.
const READY_TIMEOUT: Duration = Duration::from_secs(15);
/// How long it may take to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);
/// The app server in errors.
const WHO: &str = "the sockbench app server";

/// A running app server.
pub struct AppProcess {
    child: Child,
    endpoints: Vec<Endpoint>,
    // Last, so the directory goes after the server has stopped.
    dir: PrivateDir,
}

impl AppProcess {
    /// Starts an app server listening on each of `transports`, as `account` when
    /// given (root's runs), each listener letting at most `backlog` connections
    /// wait to be accepted (`None`: as many as the kernel allows).
    pub fn start(
        transports: &[Transport],
        account: Option<&Account>,
        backlog: Option<u32>,
    ) -> Result<AppProcess> {
        let dir = crate::system::account::server_dir(
            account,
            super::DIR_PREFIX,
            WHO,
            "sockbench.sock",
            MAX_UNIX_PATH,
        )?;
        let asked: Vec<Endpoint> = transports
            .iter()
            .map(|t| t.local_endpoint(dir.path(), "app"))
            .collect();
        let exe = std::env::current_exe().context("cannot find the sockbench binary")?;
        let mut command = Command::new(&exe);
        command.args(["serve", "--http"]);
        for endpoint in &asked {
            command.arg("--listen").arg(endpoint.to_string());
        }
        if let Some(account) = account {
            command.arg("--account").arg(&account.name);
        }
        if let Some(backlog) = backlog {
            command.arg("--backlog").arg(backlog.to_string());
        }
        // Like every server sockbench starts, with an empty environment.
        command
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        crate::subprocess::tie_to_parent(&mut command, libc::SIGKILL);
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot start {WHO} ({})", exe.display()))?;
        let stderr_tail =
            crate::subprocess::forward_stderr(child.stderr.take().expect("stderr is piped"));
        let lines = crate::subprocess::read_lines(child.stdout.take().expect("stdout is piped"));
        // Held first, so that a failure from here on stops it.
        let mut server = AppProcess {
            child,
            endpoints: Vec::new(),
            dir,
        };
        server.dir.record_server(server.pid())?;
        let ready = crate::subprocess::wait_ready(&lines, WHO, READY_TIMEOUT).and_then(|addrs| {
            addrs
                .iter()
                .map(|a| a.parse().map_err(|e: String| anyhow!(e)))
                .collect::<Result<Vec<Endpoint>>>()
        });
        match ready {
            Ok(endpoints) => {
                server.endpoints = endpoints;
                server.check_listeners()?;
                Ok(server)
            }
            Err(e) => {
                server.stop();
                let tail = stderr_tail.recv_timeout(STOP_TIMEOUT).unwrap_or_default();
                Err(match tail.trim() {
                    "" => e,
                    tail => anyhow!("{e}: {}", tail.lines().collect::<Vec<_>>().join("; ")),
                })
            }
        }
    }

    /// The process, for its CPU and placement.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Where it listens over `transport`.
    pub fn endpoint(&self, transport: Transport) -> Option<&Endpoint> {
        self.endpoints.iter().find(|e| e.transport == transport)
    }

    /// True while it runs (neither exited nor a zombie).
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Once, before anything is sent: every TCP port it reported is held by its
    /// own process and no other listens there (the Unix socket is in a directory
    /// only root can change).
    fn check_listeners(&self) -> Result<()> {
        use crate::transport::Address;
        for endpoint in &self.endpoints {
            let Address::Ip(addr) = endpoint.address else {
                continue;
            };
            let listeners = crate::system::peers::tcp_listeners(addr.port())
                .with_context(|| format!("cannot check who answers at {WHO}'s {endpoint}"))?;
            let foreign = listeners.iter().find(|l| {
                (l.addr.is_unspecified() || l.addr.is_loopback())
                    && !crate::system::peers::holds(self.pid(), l.inode)
            });
            if let Some(l) = foreign {
                bail!(
                    "another process listens at {WHO}'s port {} (on {}, user ID {}); another \
                     local account may have bound it first",
                    l.port,
                    l.addr,
                    l.uid
                );
            }
        }
        Ok(())
    }

    /// Sends SIGTERM (by its PID), waits briefly, then SIGKILL.
    fn stop(&mut self) {
        crate::subprocess::stop(&mut self.child, &[(libc::SIGTERM, STOP_TIMEOUT)]);
    }
}

impl Drop for AppProcess {
    fn drop(&mut self) {
        self.stop();
    }
}
