//! `sockbench serve`: the server alone, until Ctrl-C or SIGTERM.

use crate::cli::ServeArgs;
use crate::dir::Dir;
use crate::error::usage;
use crate::interrupt;
use crate::sockets::server;
use crate::transport::Endpoint;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::time::Duration;

pub fn run(args: &ServeArgs) -> Result<()> {
    interrupt::install();
    for endpoint in &args.listen {
        check_path(endpoint)?;
    }
    let bound = server::bind_all(&args.listen)?;
    // Each socket file is held by its directory and identity, so the one removed at
    // the end is the one bound, wherever its path may point by then.
    let socket_files: Vec<_> = bound
        .iter()
        .filter_map(|b| b.endpoint.path())
        .filter_map(|path| {
            let (dir, name) = Dir::open_parent(path).ok()?;
            let bound = dir.entry_at(&name).ok()??;
            Some((dir, name, bound))
        })
        .collect();
    let mut said: String = bound
        .iter()
        .map(|b| format!("listening {}\n", b.endpoint))
        .collect();
    said.push_str("ready\n");
    let mut out = std::io::stdout().lock();
    // Nobody can learn where it listens (a full disk, a closed pipe): the server
    // ends at once, in one line.
    if let Err(e) = out.write_all(said.as_bytes()).and_then(|()| out.flush()) {
        remove_sockets(socket_files);
        bail!("cannot write to standard output: {e}");
    }
    drop(out);
    server::spawn_all(bound).context("cannot start the server threads")?;
    while !interrupt::interrupted() {
        std::thread::sleep(Duration::from_millis(50));
    }
    remove_sockets(socket_files);
    Ok(())
}

/// Removes each socket file that is still the one bound.
fn remove_sockets(files: Vec<(Dir, std::ffi::OsString, crate::dir::Entry)>) {
    for (dir, name, bound) in files {
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
