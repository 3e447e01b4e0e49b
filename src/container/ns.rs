//! Network and mount namespaces held by descriptors, never by name: nothing in
//! `ip netns` or `/run/netns`, and a namespace goes when the last process in it and
//! the last descriptor to it do, so a killed run leaves none behind.

use anyhow::{anyhow, bail, Context, Result};
use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// A network namespace, held open.
pub struct NetNs(OwnedFd);

impl NetNs {
    /// A new network namespace with its loopback device up.
    pub fn new() -> Result<NetNs> {
        let made = std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: a plain syscall; CLONE_NEWNET moves this thread alone.
                if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                File::open("/proc/thread-self/ns/net").map(OwnedFd::from)
            })
            .join()
        });
        let fd = made
            .map_err(|_| anyhow!("the thread making a network namespace panicked"))?
            .context("cannot make a network namespace")?;
        let ns = NetNs(fd);
        ns.run(|| super::tool::ip(&["link", "set", "lo", "up"]))??;
        Ok(ns)
    }

    /// The namespace the calling thread is in.
    pub fn current() -> Result<NetNs> {
        let fd = File::open("/proc/thread-self/ns/net")
            .context("cannot open this thread's network namespace")?;
        Ok(NetNs(fd.into()))
    }

    /// A path that names this namespace to another program of this process's
    /// lifetime (`ip link … netns PATH`).
    pub fn path(&self) -> String {
        format!("/proc/{}/fd/{}", std::process::id(), self.0.as_raw_fd())
    }

    /// Moves the calling thread into this namespace.
    pub fn enter(&self) -> std::io::Result<()> {
        // SAFETY: a plain syscall on a descriptor this value holds open.
        if unsafe { libc::setns(self.0.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Runs `f` on a thread of its own in this namespace (a program it starts is
    /// in the namespace too, and must end before `f` returns).
    pub fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R> {
        std::thread::scope(|s| {
            s.spawn(|| -> Result<R> {
                self.enter().context("cannot enter a network namespace")?;
                Ok(f())
            })
            .join()
            .map_err(|_| anyhow!("a thread in a network namespace panicked"))?
        })
    }
}

/// The name of the container's thread.
const THREAD: &str = "container";

/// Work sent to the container's thread.
type Job = Box<dyn FnOnce() + Send>;

/// The container's own thread: in the server's network namespace and in a mount
/// namespace of its own, it starts the servers, which are in both from then on.
/// It lives as long as the container, because a server's death signal
/// (`PR_SET_PDEATHSIG`) comes when the thread that started it ends.
pub struct Inside {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Inside {
    /// Starts the thread in `net` and in a private copy of the mounts.
    pub fn start(net: &NetNs) -> Result<Inside> {
        let fd = net
            .0
            .try_clone()
            .context("cannot hold a network namespace")?;
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, started) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name(THREAD.into())
            .spawn(move || {
                let entered = crate::mounts::enter_private().and_then(|()| NetNs(fd).enter());
                let ok = entered.is_ok();
                let _ = ready.send(entered);
                if ok {
                    for job in queue {
                        job();
                    }
                }
            })
            .context("cannot start the container's thread")?;
        let mut inside = Inside {
            jobs: Some(jobs),
            thread: Some(thread),
        };
        match started.recv() {
            Ok(Ok(())) => Ok(inside),
            Ok(Err(e)) => {
                inside.end();
                Err(e).context("cannot put a thread in the container's namespaces")
            }
            Err(_) => bail!("the container's thread ended at its start"),
        }
    }

    /// Runs `f` on the container's thread and returns what it returned.
    pub fn run<R: Send + 'static>(&self, f: impl FnOnce() -> R + Send + 'static) -> Result<R> {
        let (tx, rx) = mpsc::sync_channel(1);
        let jobs = self.jobs.as_ref().context("the container has ended")?;
        jobs.send(Box::new(move || {
            let _ = tx.send(f());
        }))
        .map_err(|_| anyhow!("the container's thread has ended"))?;
        rx.recv()
            .map_err(|_| anyhow!("the container's thread ended while working"))
    }

    /// Ends the thread once its work is done.
    pub fn end(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        self.end();
    }
}

/// Bind-mounts `dir` on itself in the calling thread's mounts, which must be the
/// container's (a job of [`Inside::run`]), as a volume shared from the host is:
/// a server started there then reaches it through the mount, the host as always.
/// The mount is undone when the guard drops on that thread, unless it is kept
/// ([`Shared::keep`]): a directory that is a mount point cannot be removed where
/// it is one.
pub fn share_here(dir: &Path) -> Result<Shared> {
    // Anywhere else the mount would be the host's.
    if std::thread::current().name() != Some(THREAD) {
        bail!("a directory is shared into the container from its own thread only");
    }
    let path = CString::new(dir.as_os_str().as_bytes())?;
    // SAFETY: a valid NUL-terminated string; the mount is made in the container
    // thread's own mount namespace.
    let made = unsafe {
        libc::mount(
            path.as_ptr(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        )
    };
    if made != 0 {
        bail!(
            "cannot share {} into the container: {}",
            dir.display(),
            std::io::Error::last_os_error()
        );
    }
    Ok(Shared(Some(path)))
}

/// A directory shared into the container, unmounted there on drop.
pub struct Shared(Option<CString>);

impl Shared {
    /// Keeps the mount for as long as the container lives (its processes hold it).
    pub fn keep(mut self) {
        self.0.take();
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            // SAFETY: a valid NUL-terminated string; the guard is made and dropped
            // on the container's thread, in its own mount namespace.
            unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) };
        }
    }
}

/// While it lives, the thread that made it is in the client's namespace; its
/// sockets are made there (a connection made before keeps its own).
pub struct ClientSide<'a> {
    back: &'a NetNs,
}

impl<'a> ClientSide<'a> {
    pub fn enter(client: &NetNs, back: &'a NetNs) -> Result<ClientSide<'a>> {
        client
            .enter()
            .context("cannot enter the client container's network namespace")?;
        Ok(ClientSide { back })
    }
}

impl Drop for ClientSide<'_> {
    fn drop(&mut self) {
        // The host's namespace, held open since the network was built: entering
        // it again cannot fail for root, who entered the client's.
        if let Err(e) = self.back.enter() {
            panic!("cannot go back to the host's network namespace: {e}");
        }
    }
}
