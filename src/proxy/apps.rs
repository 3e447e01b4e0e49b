//! The app server behind nginx, whichever it is: sockbench's own
//! (`app_process.rs`), gunicorn (`gunicorn.rs`), or the user's, started from
//! `--app` or running at `--upstream` (`user_app.rs`). The suite asks each the
//! same: where each column reaches it, which process is its `app` role, whether
//! it still runs, and who may answer on a connection straight to it.

use super::app_process::AppProcess;
use super::gunicorn::Gunicorn;
use super::plan::{AppServerKind, AppSource, ProxyPlan, UserUpstream};
use super::user_app::{self, Command};
use crate::cpu::ServerRole;
use crate::harness::Progress;
use crate::results::Product;
use crate::system::account::Account;
use crate::transport::{Conn, Endpoint, Transport};
use anyhow::{bail, Result};

/// A running app server, or the user's that runs.
pub enum AppServer {
    Sockbench(AppProcess),
    Gunicorn(Gunicorn, String),
    /// The user's command, one start per transport, in the plan's order.
    Commands(Vec<Command>),
    /// The user's app servers that run, and the process of each when found.
    Running(Vec<(UserUpstream, Option<u32>)>),
}

/// One column: its name and where it reaches the app server.
pub struct Column {
    pub label: String,
    pub endpoint: Endpoint,
}

impl AppServer {
    /// Starts the plan's app server (`backlog`: the listen backlog of one that
    /// sockbench starts for the overload experiment), or finds the user's.
    pub fn start(
        plan: &ProxyPlan,
        account: Option<&Account>,
        backlog: Option<u32>,
        progress: &dyn Progress,
    ) -> Result<AppServer> {
        Ok(match &plan.app {
            AppSource::Ours(AppServerKind::Sockbench) => {
                AppServer::Sockbench(AppProcess::start(&plan.transports, account, backlog)?)
            }
            AppSource::Ours(AppServerKind::Gunicorn) => {
                let program = super::gunicorn::find_program().ok_or_else(|| {
                    crate::error::usage(
                        "gunicorn was not found; install it (Debian/Ubuntu: apt-get install \
                         gunicorn) to measure it as the app server",
                    )
                })?;
                let version =
                    super::gunicorn::version(&program)?.unwrap_or_else(|| "unknown".into());
                let g = Gunicorn::start(&plan.transports, account, plan.app_workers, backlog)?;
                AppServer::Gunicorn(g, version)
            }
            AppSource::Command(command) => {
                let path = plan.path.as_deref().unwrap_or("/");
                let mut started = Vec::new();
                for &t in &plan.transports {
                    started.push(Command::start(command, t, account, path)?);
                }
                AppServer::Commands(started)
            }
            AppSource::Running(ups) => {
                let mut found = Vec::new();
                for up in ups {
                    let pid = match user_app::running_process(&up.endpoint) {
                        Ok(pid) => Some(pid),
                        Err(why) => {
                            progress.note(&format!(
                                "proxy: {}: {why}, so its CPU is not counted",
                                up.label
                            ));
                            None
                        }
                    };
                    found.push((up.clone(), pid));
                }
                AppServer::Running(found)
            }
        })
    }

    /// The columns, in the plan's order.
    pub fn columns(&self, transports: &[Transport]) -> Result<Vec<Column>> {
        let ours = |endpoint: Option<&Endpoint>, t: Transport| -> Result<Column> {
            let Some(endpoint) = endpoint else {
                bail!("the app server does not listen over {t}");
            };
            Ok(Column {
                label: t.name().to_string(),
                endpoint: endpoint.clone(),
            })
        };
        match self {
            AppServer::Sockbench(a) => transports.iter().map(|&t| ours(a.endpoint(t), t)).collect(),
            AppServer::Gunicorn(g, _) => {
                transports.iter().map(|&t| ours(g.endpoint(t), t)).collect()
            }
            AppServer::Commands(started) => Ok(started
                .iter()
                .map(|c| Column {
                    label: c.endpoint.transport.name().to_string(),
                    endpoint: c.endpoint.clone(),
                })
                .collect()),
            AppServer::Running(found) => Ok(found
                .iter()
                .map(|(up, _)| Column {
                    label: up.label.clone(),
                    endpoint: up.endpoint.clone(),
                })
                .collect()),
        }
    }

    /// The `app` role of column `column`: the process its CPU is counted from.
    pub fn role(&self, column: usize) -> Option<ServerRole> {
        match self {
            AppServer::Sockbench(a) => Some(ServerRole::started("app", a.pid())),
            AppServer::Gunicorn(g, _) => Some(ServerRole::started("app", g.pid())),
            AppServer::Commands(started) => started
                .get(column)
                .map(|c| ServerRole::started("app", c.pid())),
            AppServer::Running(found) => found
                .get(column)
                .and_then(|(_, pid)| *pid)
                .map(|pid| ServerRole::found_as("app", pid)),
        }
    }

    /// Whether sockbench may place the app server (one it started).
    pub fn placeable(&self) -> bool {
        !matches!(self, AppServer::Running(_))
    }

    /// An error naming the app server when one sockbench started no longer runs
    /// (or, for the user's command, no longer holds its port alone).
    pub fn check_running(&mut self) -> Result<()> {
        let gone = |what: &str, pid: u32| {
            anyhow::anyhow!(
                "{what} (process {pid}) is no longer running (it exited or was killed); \
                 nothing more was sent to its addresses"
            )
        };
        match self {
            AppServer::Sockbench(a) => match a.running() {
                true => Ok(()),
                false => Err(gone("the sockbench app server", a.pid())),
            },
            AppServer::Gunicorn(g, _) => match g.running() {
                true => Ok(()),
                false => Err(gone("gunicorn", g.pid())),
            },
            // Its port checked again before each trial: a command's listener may
            // be a child that restarts, leaving the port free meanwhile.
            AppServer::Commands(started) => {
                for c in started.iter_mut() {
                    if !c.running() {
                        return Err(gone("your app server (--app)", c.pid()));
                    }
                    c.check_listeners()?;
                }
                Ok(())
            }
            AppServer::Running(_) => Ok(()),
        }
    }

    /// Before anything is sent on a connection straight to it: that its peer is
    /// the app server's (where its socket is in a directory another account can
    /// change).
    pub fn check_peer(&self, column: usize, conn: &Conn) -> Result<()> {
        match self {
            AppServer::Gunicorn(g, _) => g.check_peer(conn),
            AppServer::Commands(started) => match started.get(column) {
                Some(c) => c.check_peer(conn),
                None => Ok(()),
            },
            // sockbench's socket is in a directory only root can change; the
            // user's that runs is the one they named.
            AppServer::Sockbench(_) | AppServer::Running(_) => Ok(()),
        }
    }

    /// What the facts say runs behind nginx.
    pub fn product(&self) -> Product {
        let (name, version) = match self {
            AppServer::Sockbench(_) => ("sockbench".to_string(), env!("CARGO_PKG_VERSION").into()),
            AppServer::Gunicorn(_, version) => ("gunicorn".to_string(), version.clone()),
            AppServer::Commands(_) | AppServer::Running(_) => {
                ("yours".to_string(), "unknown".to_string())
            }
        };
        Product {
            role: "app".into(),
            name,
            version,
        }
    }
}
