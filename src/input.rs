//! Files a user hands to sockbench (result files, scripts), read with limits: only
//! a regular file, so a FIFO cannot block the run and `/dev/zero` cannot fill the
//! memory, and only up to a size that no real file of the kind reaches.

use anyhow::Result;
use std::fs::File;
use std::io::Read;
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
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(kind.to_string());
    }
    if meta.len() > limit {
        return Err(format!(
            "{} bytes, more than the {} a file of this kind can hold",
            meta.len(),
            crate::units::format_size(limit)
        ));
    }
    let mut text = String::new();
    read_at_most(file, limit, &mut text)?;
    Ok(text)
}

fn read_at_most(file: File, limit: u64, text: &mut String) -> Result<(), String> {
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
    *text = String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())?;
    Ok(())
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
