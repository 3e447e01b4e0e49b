//! Files a user hands to sockbench (result files, scripts), read with limits: only
//! a regular file, so a FIFO cannot block the run and `/dev/zero` cannot fill the
//! memory, and only up to a size that no real file of the kind reaches.

use std::fs::{File, FileType};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Reads the text of the regular file at `path`, at most `limit` bytes; the error
/// says what is wrong in a few words (the caller names the file and what to do).
pub fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    // Non-blocking, so opening a FIFO with no writer does not wait; the type check
    // below then refuses it.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!(
            "it is {}, not a regular file",
            kind(&meta.file_type())
        ));
    }
    if meta.len() > limit {
        return Err(format!(
            "{} bytes, more than the {} a file of this kind can hold",
            meta.len(),
            crate::units::format_size(limit)
        ));
    }
    read_at_most(file, limit)
}

/// What a file that is not a regular one is, in a few words.
pub fn kind(t: &FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

fn read_at_most(file: File, limit: u64) -> Result<String, String> {
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "grew past {} while being read",
            crate::units::format_size(limit)
        ));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_directories_and_large_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a plain syscall on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for path in [Path::new("/dev/zero"), &fifo, dir.path()] {
            assert!(read_text(path, 1 << 20).is_err(), "{}", path.display());
        }
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        assert!(read_text(&big, 1024).unwrap_err().contains("2048 bytes"));
        assert_eq!(read_text(&big, 4096).unwrap().len(), 2048);
    }
}
