//! Writing a directory atomically.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// An I/O error and the path it happened at.
#[derive(Debug)]
pub struct FileError {
    pub path: PathBuf,
    pub error: io::Error,
}

impl FileError {
    /// `map_err(FileError::at(path))`.
    pub fn at(path: &Path) -> impl FnOnce(io::Error) -> FileError + '_ {
        move |error| FileError { path: path.to_path_buf(), error }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.error, self.path.display())
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Makes the directory `target` with `fill`, atomically: `fill` writes into a hidden
/// temporary directory next to `target` (`.NAME.tmp-PID`), which is renamed to `target`
/// only once `fill` succeeded. An existing `target` is moved aside (`.NAME.old-PID`)
/// for the rename and deleted after it; on any failure the temporary directory is
/// removed and a previous `target` is left (or put back) in place. Missing parents of
/// `target` are created.
pub fn write_atomically(target: &Path, fill: impl FnOnce(&Path) -> Result<(), FileError>) -> Result<(), FileError> {
    let name = target.file_name().ok_or_else(|| FileError {
        path: target.to_path_buf(),
        error: io::Error::new(io::ErrorKind::InvalidInput, "not a directory name"),
    })?;
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent).map_err(FileError::at(parent))?;
    let pid = std::process::id();
    let hidden = |what: &str| {
        let mut file = std::ffi::OsString::from(".");
        file.push(name);
        file.push(format!(".{what}-{pid}"));
        parent.join(file)
    };
    let (tmp, old) = (hidden("tmp"), hidden("old"));
    let _ = std::fs::remove_dir_all(&tmp);
    let result = (|| {
        std::fs::create_dir(&tmp).map_err(FileError::at(&tmp))?;
        fill(&tmp)?;
        if target.exists() {
            std::fs::rename(target, &old).map_err(FileError::at(target))?;
            std::fs::rename(&tmp, target).map_err(FileError::at(target))?;
            let _ = std::fs::remove_dir_all(&old).or_else(|_| std::fs::remove_file(&old));
        } else {
            std::fs::rename(&tmp, target).map_err(FileError::at(target))?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        if old.exists() && !target.exists() {
            let _ = std::fs::rename(&old, target);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("shoal-run-dir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    fn write(dir: &Path, name: &str, text: &str) -> Result<(), FileError> {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(FileError::at(&path))
    }

    fn disk_full(dir: &Path) -> Result<(), FileError> {
        write(dir, "flows.parquet", "PAR1 half a file")?;
        Err(FileError { path: dir.join("summary.json"), error: io::Error::other("disk full") })
    }

    #[test]
    fn creates_parents_and_replaces_a_previous_directory() {
        let root = scratch("replace");
        let target = root.join("a/b/run");
        write_atomically(&target, |d| write(d, "x.txt", "1")).unwrap();
        std::fs::write(target.join("stale.txt"), "old").unwrap();
        write_atomically(&target, |d| write(d, "x.txt", "2")).unwrap();
        assert_eq!(listing(&target), ["x.txt"]);
        assert_eq!(std::fs::read_to_string(target.join("x.txt")).unwrap(), "2");
        assert_eq!(listing(&root.join("a/b")), ["run"]);
        // A file in the way is replaced too, and leaves nothing behind.
        let file = root.join("a/b/file");
        std::fs::write(&file, "x").unwrap();
        write_atomically(&file, |d| write(d, "x.txt", "3")).unwrap();
        assert_eq!(listing(&file), ["x.txt"]);
        assert_eq!(listing(&root.join("a/b")), ["file", "run"]);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let root = scratch("fresh");
        let target = root.join("run");
        let err = write_atomically(&target, disk_full).unwrap_err();
        assert_eq!(err.error.to_string(), "disk full");
        assert!(err.path.ends_with("summary.json"));
        assert!(listing(&root).is_empty(), "{:?}", listing(&root));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_failed_rewrite_keeps_the_previous_directory() {
        let root = scratch("keep");
        let target = root.join("run");
        write_atomically(&target, |d| write(d, "x.txt", "1")).unwrap();
        assert!(write_atomically(&target, disk_full).is_err());
        assert_eq!(listing(&root), ["run"]);
        assert_eq!(listing(&target), ["x.txt"]);
        assert_eq!(std::fs::read_to_string(target.join("x.txt")).unwrap(), "1");
        // A failed rename (the aside name is taken) also keeps it.
        let aside = root.join(format!(".run.old-{}", std::process::id()));
        std::fs::create_dir_all(aside.join("full")).unwrap();
        assert!(write_atomically(&target, |d| write(d, "x.txt", "2")).is_err());
        assert_eq!(std::fs::read_to_string(target.join("x.txt")).unwrap(), "1");
        std::fs::remove_dir_all(&aside).unwrap();
        assert_eq!(listing(&root), ["run"]);
        std::fs::remove_dir_all(root).unwrap();
    }
}
