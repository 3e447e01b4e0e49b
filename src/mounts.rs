//! A thread's own copy of the mounts, for sockbench to mount in (tracefs, a
//! container's shared socket directory) without touching the host's.

/// Gives the calling thread its own copy of the mounts, made private first so
/// that nothing mounted in it reaches the host's.
pub fn enter_private() -> std::io::Result<()> {
    // SAFETY: plain syscalls on this thread alone (CLONE_NEWNS implies CLONE_FS:
    // other threads keep their file-system state); the pointers are valid
    // NUL-terminated strings or null where allowed.
    unsafe {
        if libc::unshare(libc::CLONE_NEWNS) != 0
            || libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
