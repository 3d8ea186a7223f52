//! Files that survive a crash: whole files written beside their final name and renamed into
//! place, and append-only files whose every record reaches the disk before the next one starts.
//!
//! Why: a sweep may be killed at any instant (kill -9, a lost node, Slurm preempting the job),
//! and what it leaves must be either complete or recognisably unfinished, never a file that reads
//! as whole but is not (docs/architecture.md, "Sweeps, shards and resume"). rename(2) within one
//! directory replaces the name atomically on POSIX file systems, so a reader sees the old file or
//! the new one; fsync(2) of the file before the rename and of the directory after it makes the
//! new name survive a power loss too (the write-temp-then-rename pattern; see the Linux man page
//! of rename(2) and LWN's "Ensuring data reaches disk", 2011). An append-only file cannot be
//! renamed into place record by record, so each record is one `write` followed by an fsync, and
//! a torn record can only be the last line, without its newline ([`split_torn_tail`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What the names of unfinished files contain: `.<name>.partial-<pid>` beside `<name>`.
const PARTIAL_MARK: &str = ".partial-";

/// The temporary name `path`'s content is written under before it is renamed to `path`: hidden,
/// in the same directory (a rename never crosses file systems), and unique to this process.
pub fn partial_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}{PARTIAL_MARK}{}", std::process::id()))
}

/// Whether `name` is a file name [`partial_path`] makes: the leftover of a write that was
/// killed before its rename.
pub fn is_partial(name: &str) -> bool {
    name.starts_with('.') && name.contains(PARTIAL_MARK)
}

/// Writes `bytes` to `path` so that `path` holds either its old content or all of `bytes`,
/// whenever the process dies: to [`partial_path`] first, fsync'd, then renamed over `path`, and
/// the directory fsync'd. The partial file is removed when a step fails.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let partial = partial_path(path);
    let written = (|| {
        let mut file = File::create(&partial)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&partial, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}

/// Makes the directory entries of `dir` (a rename into it, a file created or removed) durable.
/// A no-op where directories cannot be opened as files (not on Unix).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if cfg!(unix) {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Removes every unfinished file or directory ([`is_partial`]) under `dir`, recursively; returns
/// how many. A missing `dir` has none.
pub fn remove_partials(dir: &Path) -> io::Result<usize> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry?;
        let is_dir = entry.file_type()?.is_dir();
        if is_partial(&entry.file_name().to_string_lossy()) {
            if is_dir {
                std::fs::remove_dir_all(entry.path())?;
            } else {
                std::fs::remove_file(entry.path())?;
            }
            removed += 1;
        } else if is_dir {
            removed += remove_partials(&entry.path())?;
        }
    }
    Ok(removed)
}

/// A file written whole before anyone sees it: the bytes go to [`partial_path`] and
/// [`commit`](AtomicFile::commit) fsyncs it and renames it over the final name; dropped without a
/// commit (a failed run), the partial file is removed. What [`write_atomic`] does for bytes
/// already in memory, for a writer that produces them piece by piece.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    partial: PathBuf,
    file: Option<io::BufWriter<File>>,
}

impl AtomicFile {
    /// Starts `path`: creates its partial file (so a path that cannot be written fails here).
    pub fn create(path: &Path) -> io::Result<Self> {
        let partial = partial_path(path);
        let file = File::create(&partial)?;
        Ok(Self {
            path: path.to_path_buf(),
            partial,
            file: Some(io::BufWriter::new(file)),
        })
    }

    /// Makes the file durable and gives it its name.
    pub fn commit(mut self) -> io::Result<()> {
        let Some(buffered) = self.file.take() else {
            return Ok(());
        };
        let file = buffered
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.partial, &self.path)?;
        sync_dir(self.path.parent().unwrap_or(Path::new(".")))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.file.as_mut() {
            Some(file) => file.write(buf),
            None => Err(io::Error::other("the file is already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), Write::flush)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// A file written one record at a time: each `write` goes straight to the file (no buffer, so a
/// record handed over in one `write_all` is never split between two system calls by us) and
/// [`flush`](Write::flush) fsyncs it, so a caller that flushes after every record commits them
/// one by one.
#[derive(Debug)]
pub struct SyncedFile {
    file: File,
}

impl SyncedFile {
    /// Creates (or truncates) `path`.
    pub fn create(path: &Path) -> io::Result<Self> {
        File::create(path).map(|file| Self { file })
    }

    /// Opens `path` for appending, creating it when missing.
    pub fn append(path: &Path) -> io::Result<Self> {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map(|file| Self { file })
    }

    /// Writes one whole record and makes it durable.
    pub fn commit(&mut self, record: &[u8]) -> io::Result<()> {
        self.file.write_all(record)?;
        self.file.sync_data()
    }
}

impl Write for SyncedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
}

/// Splits the content of a line-per-record file into its complete lines (each ending in `\n`)
/// and what follows the last newline: empty when the last record is whole, else the start of a
/// record whose writer died before finishing it, which must not be read as a record.
pub fn split_torn_tail(bytes: &[u8]) -> (&[u8], &[u8]) {
    let end = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |last| last + 1);
    bytes.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("durable-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn an_atomic_write_replaces_the_whole_file_and_leaves_no_partial() {
        let dir = scratch("atomic");
        let path = dir.join("report.json");
        std::fs::write(&path, b"old").unwrap();
        write_atomic(&path, b"new content").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new content");
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["report.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_atomic_write_into_a_missing_directory_fails_without_leftovers() {
        let dir = scratch("missing");
        let err = write_atomic(&dir.join("absent").join("x.json"), b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn partial_files_are_recognised_and_removed_recursively() {
        let dir = scratch("partials");
        let sub = dir.join("telemetry").join("starlink");
        std::fs::create_dir_all(&sub).unwrap();
        let partial = partial_path(&sub.join("seed-1.jsonl"));
        let name = partial.file_name().unwrap().to_string_lossy().into_owned();
        assert!(is_partial(&name), "{name}");
        assert!(!is_partial("seed-1.jsonl"));
        assert!(!is_partial(".hidden"));
        std::fs::write(&partial, b"{\"half").unwrap();
        std::fs::write(sub.join("seed-2.jsonl"), b"{}\n").unwrap();
        let plots = partial_path(&dir.join("plots"));
        std::fs::create_dir_all(&plots).unwrap();
        std::fs::write(plots.join("a.png"), b"png").unwrap();
        assert_eq!(remove_partials(&dir).unwrap(), 2);
        assert!(!plots.exists());
        assert!(!partial.exists());
        assert!(sub.join("seed-2.jsonl").exists());
        assert_eq!(remove_partials(&dir.join("none")).unwrap(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_synced_file_appends_whole_records() {
        let dir = scratch("synced");
        let path = dir.join("cells.jsonl");
        SyncedFile::append(&path).unwrap().commit(b"a\n").unwrap();
        let mut file = SyncedFile::append(&path).unwrap();
        file.commit(b"b\n").unwrap();
        file.write_all(b"c\n").unwrap();
        file.flush().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a\nb\nc\n");
        SyncedFile::create(&path).unwrap().commit(b"d\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"d\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_atomic_file_appears_only_when_committed() {
        let dir = scratch("atomic-file");
        let path = dir.join("call.jsonl");
        let mut file = AtomicFile::create(&path).unwrap();
        file.write_all(b"a\n").unwrap();
        assert!(!path.exists());
        file.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a\n");

        let mut abandoned = AtomicFile::create(&path).unwrap();
        abandoned.write_all(b"b\n").unwrap();
        drop(abandoned);
        assert_eq!(std::fs::read(&path).unwrap(), b"a\n");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        assert!(AtomicFile::create(&dir.join("absent").join("x")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_torn_tail_is_what_follows_the_last_newline() {
        assert_eq!(split_torn_tail(b"a\nb\n"), (&b"a\nb\n"[..], &b""[..]));
        assert_eq!(
            split_torn_tail(b"a\nb\n{\"ha"),
            (&b"a\nb\n"[..], &b"{\"ha"[..])
        );
        assert_eq!(split_torn_tail(b"{\"ha"), (&b""[..], &b"{\"ha"[..]));
        assert_eq!(split_torn_tail(b""), (&b""[..], &b""[..]));
    }
}
