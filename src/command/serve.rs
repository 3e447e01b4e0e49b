//! `sockbench serve`: the server alone, until Ctrl-C or SIGTERM. `--http` serves
//! sockbench's HTTP app server (`proxy/app.rs`) instead of the socket server, with
//! the same output and the same stop.

use crate::cli::ServeArgs;
use crate::dir::{Dir, Entry};
use crate::error::usage;
use crate::interrupt;
use crate::proxy::app;
use crate::sockets::server;
use crate::sockets::server::protocol::Secret;
use crate::transport::Endpoint;
use anyhow::{anyhow, Context, Result};
use std::ffi::OsString;
use std::io::{BufRead, Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::time::Duration;

pub fn run(args: &ServeArgs) -> Result<()> {
    interrupt::install();
    for endpoint in &args.listen {
        check_path(endpoint)?;
    }
    if args.http {
        return http(args);
    }
    let secret = args.secret_on_stdin.then(read_secret).transpose()?;
    let bound = server::bind_all(&args.listen)?;
    let endpoints: Vec<Endpoint> = bound.iter().map(|b| b.endpoint.clone()).collect();
    let socket_files = socket_files(&endpoints);
    if let Err(e) = announce(&endpoints) {
        remove_sockets(socket_files);
        return Err(e);
    }
    server::spawn_all(bound, secret).context("cannot start the server threads")?;
    until_interrupted();
    remove_sockets(socket_files);
    Ok(())
}

/// The secret on standard input: one line of 32 hexadecimal digits.
fn read_secret() -> Result<Secret> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .take(64)
        .read_line(&mut line)
        .map_err(|e| anyhow!("cannot read the secret from standard input: {e}"))?;
    Secret::from_hex(&line).ok_or_else(|| {
        usage(
            "--secret-on-stdin: standard input holds no secret (one line of 32 hexadecimal digits)",
        )
    })
}

/// `serve --http`: bound (as root), handed to `--account` and run as it, then
/// announced and served.
fn http(args: &ServeArgs) -> Result<()> {
    let account = args.account.as_deref().map(app::account).transpose()?;
    let listening = app::bind(&args.listen, args.backlog)?;
    let endpoints: Vec<Endpoint> = listening.iter().map(|l| l.endpoint.clone()).collect();
    let socket_files = socket_files(&endpoints);
    if let Some(account) = &account {
        let files = endpoints.iter().filter(|e| e.path().is_some()).count();
        let handed = if socket_files.len() < files {
            Err(anyhow!(
                "cannot find the socket files just bound, to hand them to '{}'",
                account.name
            ))
        } else {
            socket_files
                .iter()
                .try_for_each(|f| app::hand_socket(&f.dir, &f.name, &f.bound, account.owner()))
        }
        .and_then(|()| app::run_as(account));
        if let Err(e) = handed {
            remove_sockets(socket_files);
            return Err(e);
        }
    }
    if let Err(e) = announce(&endpoints) {
        remove_sockets(socket_files);
        return Err(e);
    }
    let serving = app::spawn(listening).context("cannot start the HTTP app server")?;
    until_interrupted();
    drop(serving);
    // Run as another account, the server can no longer remove a socket from
    // root's directory: it goes with that directory.
    remove_sockets(socket_files);
    Ok(())
}

/// A socket file the server bound, held by its directory and identity, so the one
/// removed at the end is the one bound, wherever its path may point by then.
struct SocketFile {
    dir: Dir,
    name: OsString,
    bound: Entry,
}

fn socket_files(endpoints: &[Endpoint]) -> Vec<SocketFile> {
    endpoints
        .iter()
        .filter_map(Endpoint::path)
        .filter_map(|path| {
            let (dir, name) = Dir::open_parent(path).ok()?;
            let bound = dir.entry_at(&name).ok()??;
            Some(SocketFile { dir, name, bound })
        })
        .collect()
}

/// Prints `listening ADDR` per address, then `ready`. Nobody can learn where the
/// server listens (a full disk, a closed pipe): it ends at once, in one line.
fn announce(endpoints: &[Endpoint]) -> Result<()> {
    let mut said: String = endpoints
        .iter()
        .map(|e| format!("listening {e}\n"))
        .collect();
    said.push_str("ready\n");
    let mut out = std::io::stdout().lock();
    out.write_all(said.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| anyhow!("cannot write to standard output: {e}"))
}

fn until_interrupted() {
    while !interrupt::interrupted() {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Removes each socket file that is still the one bound.
fn remove_sockets(files: Vec<SocketFile>) {
    for SocketFile { dir, name, bound } in files {
        let now = dir.entry_at(&name).ok().flatten();
        if now.is_some_and(|n| n.dev == bound.dev && n.ino == bound.ino) {
            let _ = dir.remove_file(&name);
        }
    }
}

/// A socket path that holds something other than a socket is refused, named for
/// what it is. A symbolic link is never followed (binding does not follow it
/// either: it would only fail as "in use"), so the message says it is a link
/// rather than guessing at what it points to.
fn check_path(endpoint: &Endpoint) -> Result<()> {
    let Some(path) = endpoint.path() else {
        return Ok(());
    };
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(usage(format!(
            "{endpoint} is a symbolic link; sockbench does not follow links at a socket \
             path: choose another path"
        ))),
        Ok(meta) if !meta.file_type().is_socket() => Err(usage(format!(
            "{endpoint} is {}, not a socket; choose another path (sockbench replaces only \
             a socket nobody listens on)",
            if meta.is_file() {
                "a regular file"
            } else {
                crate::input::kind(&meta.file_type())
            }
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::http::{self, HttpConn, HttpRequest, Status, LIMIT};
    use std::io::BufRead;
    use std::os::unix::fs::MetadataExt;
    use std::process::{Command, Stdio};
    use std::time::Instant;

    /// Set in the child the test below starts: the socket path to serve on.
    const AS_ACCOUNT_CHILD: &str = "SOCKBENCH_TEST_SERVE_HTTP_AS_NOBODY";

    /// The test binary running only this test with `AS_ACCOUNT_CHILD` set, killed
    /// by its PID if the test fails before it stops.
    struct ServeChild(std::process::Child);

    impl Drop for ServeChild {
        fn drop(&mut self) {
            crate::subprocess::stop(&mut self.0, &[]);
        }
    }

    #[test]
    fn serve_http_as_an_account_hands_it_the_sockets_and_gives_up_root() {
        if let Ok(socket) = std::env::var(AS_ACCOUNT_CHILD) {
            let args = ServeArgs {
                listen: vec![
                    format!("unix:{socket}").parse().unwrap(),
                    "tcp:127.0.0.1:0".parse().unwrap(),
                ],
                http: true,
                account: Some("nobody".into()),
                backlog: None,
                secret_on_stdin: false,
            };
            run(&args).unwrap();
            return;
        }
        let Some(nobody) = crate::system::account::server_account(&["nobody"], "a test").unwrap()
        else {
            eprintln!("SKIPPED serve_http_as_an_account: only root switches accounts");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("app.sock");
        let mut child = ServeChild(
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "command::serve::tests::serve_http_as_an_account_hands_it_the_sockets_and_gives_up_root",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(AS_ACCOUNT_CHILD, &socket)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let pid = child.0.id();
        let (tx, lines) = std::sync::mpsc::channel();
        let stdout = child.0.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        // The test harness writes the test's name before what the server says.
        let mut endpoints: Vec<Endpoint> = Vec::new();
        loop {
            let line = lines.recv_timeout(Duration::from_secs(15)).expect("ready");
            if line.ends_with("ready") {
                break;
            }
            if let Some((_, at)) = line.split_once("listening ") {
                endpoints.push(at.parse().unwrap());
            }
        }
        assert_eq!(endpoints.len(), 2, "{endpoints:?}");
        let meta = std::fs::symlink_metadata(&socket).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (nobody.uid, nobody.gid));
        assert_eq!(meta.mode() & 0o7777, 0o600);
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .unwrap_or_default()
                .split_whitespace()
                .map(|n| n.parse::<u32>().unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(field("Uid:"), [nobody.uid; 4], "{status}");
        assert_eq!(field("Gid:"), [nobody.gid; 4], "{status}");
        assert_eq!(field("Groups:"), Vec::<u32>::new(), "{status}");
        for at in &endpoints {
            let mut conn = HttpConn::new(http::connect(at).unwrap(), 100, at, LIMIT).unwrap();
            let request = HttpRequest::get("localhost", 100, true).unwrap();
            assert_eq!(conn.exchange(&request).unwrap(), Status(200), "{at}");
        }
        // SAFETY: a plain syscall on the PID of a child not yet reaped.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        let started = Instant::now();
        let ended = loop {
            if let Some(ended) = child.0.try_wait().unwrap() {
                break ended;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no stop on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(ended.success(), "{ended}");
    }

    #[test]
    fn a_symlink_at_the_socket_path_is_called_one_and_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "kept").unwrap();
        let link = dir.path().join("sb.sock");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let endpoint: Endpoint = format!("unix:{}", link.display()).parse().unwrap();
        let e = check_path(&endpoint).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let dangling = dir.path().join("dangling.sock");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let endpoint: Endpoint = format!("unix:{}", dangling.display()).parse().unwrap();
        let e = check_path(&endpoint).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert!(!dir.path().join("nowhere").exists());
        let endpoint: Endpoint = format!("unix:{}", dir.path().display()).parse().unwrap();
        let e = check_path(&endpoint).unwrap_err();
        assert!(
            e.to_string().contains("is a directory, not a socket"),
            "{e}"
        );
    }
}
