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

/// The files a run directory holds; `summary.json` is always among them. The PFC tables
/// are there when a class is lossless (`results::RunFiles`; Python's `store.RUN_FILES`).
pub const RUN_FILES: [&str; 12] = [
    "flows.parquet",
    "queues.parquet",
    "scenario.json",
    "summary.json",
    "pfc.parquet",
    "pfc_ports.parquet",
    "ingress.parquet",
    "headroom.parquet",
    "occupancy.parquet",
    "collectives.parquet",
    "series.parquet",
    "trace.pcap",
];

/// How every `summary.json` Shoal writes begins (`to_python_json` of a `Summary`).
const SUMMARY_SIGNATURE: &[u8] = b"{\n  \"shoal_version\"";

fn refused(path: &Path, why: impl Into<String>) -> FileError {
    FileError { path: path.to_path_buf(), error: io::Error::new(io::ErrorKind::AlreadyExists, why.into()) }
}

/// Whether `dir` holds nothing but run files (regular files named in `RUN_FILES`, a
/// partly written run included) and, if so, whether `summary.json` is among them.
fn run_files_in(dir: &Path) -> io::Result<Option<bool>> {
    let mut has_summary = false;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if !RUN_FILES.iter().any(|f| name == *f) || !entry.file_type()?.is_file() {
            return Ok(None);
        }
        has_summary |= name == "summary.json";
    }
    Ok(Some(has_summary))
}

/// Whether `dir` is recognizably a run directory Shoal wrote: a real directory (not a
/// link) holding nothing but regular run files, its `summary.json` written by Shoal.
fn is_run_dir(dir: &Path) -> io::Result<bool> {
    if run_files_in(dir)? != Some(true) {
        return Ok(false);
    }
    let mut head = [0u8; SUMMARY_SIGNATURE.len()];
    let read = io::Read::read(&mut std::fs::File::open(dir.join("summary.json"))?, &mut head)?;
    Ok(&head[..read] == SUMMARY_SIGNATURE)
}

/// Checks that `target` may become a run directory: it does not exist, or it is an
/// empty directory, or a run directory Shoal wrote (which is then replaced). Anything
/// else (a file, a link, a device, a directory holding other files, the current
/// directory or one of its ancestors) is refused with an error naming the path, so
/// Shoal never deletes what it did not create.
pub fn check_run_dir_target(target: &Path) -> Result<(), FileError> {
    if target.as_os_str().is_empty() {
        return Err(refused(target, "the output path is empty; name a directory for the results"));
    }
    let text = target.as_os_str().to_string_lossy();
    let last = text.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    if target.file_name().is_none() || matches!(last, "" | "." | "..") {
        return Err(refused(target, "the output path must name a new directory (not `.`, `..` or `/`)"));
    }
    let meta = match std::fs::symlink_metadata(target) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(FileError { path: target.to_path_buf(), error: e }),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err(refused(target, "refusing to replace a symbolic link with a run directory; choose another path"));
    }
    if !kind.is_dir() {
        return Err(refused(
            target,
            "refusing to replace a file that is not a Shoal run directory; choose another path",
        ));
    }
    if let (Ok(here), Ok(there)) = (std::env::current_dir(), target.canonicalize()) {
        if here.starts_with(&there) {
            return Err(refused(target, "refusing to replace the current directory or one of its parents"));
        }
    }
    let empty = std::fs::read_dir(target).map_err(FileError::at(target))?.next().is_none();
    if empty || is_run_dir(target).map_err(FileError::at(target))? {
        return Ok(());
    }
    Err(refused(
        target,
        "refusing to replace a directory that is not a Shoal run directory (it holds other files); choose a new directory",
    ))
}

/// Makes the run directory `target` with `fill`, atomically: `fill` writes into a hidden
/// temporary directory next to `target` (`.NAME.tmp-PID`), which then takes `target`'s
/// place in one step. `target` must pass [`check_run_dir_target`]; a previous run
/// directory there is swapped out (Linux: `renameat2(RENAME_EXCHANGE)`) and deleted,
/// so at every instant `target` holds either the old results or the new ones. On any
/// failure the temporary directory is removed and `target` is untouched. Missing parents
/// of `target` are created; what killed runs left next to `target` is tidied first.
pub fn write_atomically(target: &Path, fill: impl FnOnce(&Path) -> Result<(), FileError>) -> Result<(), FileError> {
    check_run_dir_target(target)?;
    let name = target.file_name().expect("checked: the target has a name");
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent).map_err(FileError::at(parent))?;
    tidy_leftovers(parent, name, target);
    let hidden = |what: &str| {
        let mut file = std::ffi::OsString::from(".");
        file.push(name);
        file.push(format!(".{what}-{}", std::process::id()));
        parent.join(file)
    };
    let tmp = hidden("tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    let result = (|| {
        std::fs::create_dir(&tmp).map_err(FileError::at(&tmp))?;
        fill(&tmp)?;
        check_run_dir_target(target)?;
        if target.exists() {
            replace_dir(&tmp, target, &hidden("old"))
        } else {
            std::fs::rename(&tmp, target).map_err(FileError::at(target))
        }
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// Puts the directory `new` in place of the directory `target`, deleting the old one.
/// On Linux the two are exchanged in one step and `new`'s name then holds the old
/// directory; elsewhere `target` moves to `aside` first, and back if the second rename
/// fails.
fn replace_dir(new: &Path, target: &Path, aside: &Path) -> Result<(), FileError> {
    #[cfg(target_os = "linux")]
    {
        if exchange(new, target).is_ok() {
            return Ok(()); // the caller removes `new`, which now holds the old results
        }
    }
    std::fs::rename(target, aside).map_err(FileError::at(target))?;
    if let Err(e) = std::fs::rename(new, target) {
        let _ = std::fs::rename(aside, target);
        return Err(FileError { path: target.to_path_buf(), error: e });
    }
    let _ = std::fs::remove_dir_all(aside);
    Ok(())
}

#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c =
        |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e));
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: both paths are valid NUL-terminated strings that outlive the call.
    let rc = unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether process `pid` is still running (true when it cannot be told).
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
        // SAFETY: signal 0 only checks that the process exists.
        let rc = unsafe { libc::kill(pid, 0) };
        rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Tidies what runs killed mid-write left next to `target` (named `.NAME.tmp-PID` or
/// `.NAME.old-PID`, PID no longer running): a directory moved aside while `target` is
/// missing is put back (it holds the previous results); the rest is deleted, but only
/// if it holds nothing but run files.
fn tidy_leftovers(parent: &Path, name: &std::ffi::OsStr, target: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    let prefix = format!(".{}.", name.to_string_lossy());
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else { continue };
        let Some((what, pid)) = rest.split_once('-') else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if !matches!(what, "tmp" | "old") || pid == std::process::id() || process_alive(pid) {
            continue;
        }
        let path = entry.path();
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if !is_dir || !matches!(run_files_in(&path), Ok(Some(_))) {
            continue;
        }
        if what == "old" && !target.exists() && is_run_dir(&path).unwrap_or(false) {
            let _ = std::fs::rename(&path, target);
        } else {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
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

    /// A run directory's files, `summary.json` as Shoal writes it, marked `version`.
    fn run(version: &str) -> impl FnOnce(&Path) -> Result<(), FileError> + '_ {
        move |dir| {
            write(dir, "flows.parquet", version)?;
            write(dir, "summary.json", &format!("{{\n  \"shoal_version\": \"{version}\"\n}}\n"))
        }
    }

    fn version(dir: &Path) -> String {
        std::fs::read_to_string(dir.join("flows.parquet")).unwrap()
    }

    fn disk_full(dir: &Path) -> Result<(), FileError> {
        write(dir, "flows.parquet", "PAR1 half a file")?;
        Err(FileError { path: dir.join("summary.json"), error: io::Error::other("disk full") })
    }

    #[test]
    fn creates_parents_and_replaces_a_previous_run_directory() {
        let root = scratch("replace");
        let target = root.join("a/b/run");
        write_atomically(&target, run("1")).unwrap();
        write_atomically(&target, |d| {
            write(d, "scenario.json", "{}")?;
            run("2")(d)
        })
        .unwrap();
        assert_eq!(listing(&target), ["flows.parquet", "scenario.json", "summary.json"]);
        assert_eq!(version(&target), "2");
        assert_eq!(listing(&root.join("a/b")), ["run"]);
        // An empty directory is taken over.
        let empty = root.join("empty");
        std::fs::create_dir(&empty).unwrap();
        write_atomically(&empty, run("3")).unwrap();
        assert_eq!(version(&empty), "3");
        std::fs::remove_dir_all(root).unwrap();
    }

    /// A run of a lossless scenario (with PFC's tables) is a run directory too: running
    /// it again into the same directory replaces it.
    #[test]
    fn a_run_with_pfc_tables_is_replaced() {
        let root = scratch("replace_pfc");
        let target = root.join("run");
        let with_pfc = |version: &'static str| {
            move |d: &Path| {
                for name in ["pfc.parquet", "pfc_ports.parquet", "ingress.parquet", "queues.parquet"] {
                    write(d, name, version)?;
                }
                run(version)(d)
            }
        };
        write_atomically(&target, with_pfc("1")).unwrap();
        write_atomically(&target, with_pfc("2")).unwrap();
        assert_eq!(version(&target), "2");
        write_atomically(&target, run("3")).unwrap();
        assert_eq!(listing(&target), ["flows.parquet", "summary.json"]);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn refuses_what_shoal_did_not_write() {
        let root = scratch("refuse");
        let file = root.join("notes.txt");
        std::fs::write(&file, "mine").unwrap();
        let mine = root.join("mine");
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("scenario.toml"), "[topology]").unwrap();
        let extra = root.join("run_plus_notes");
        write_atomically(&extra, run("1")).unwrap();
        std::fs::write(extra.join("notes.txt"), "mine").unwrap();
        let forged = root.join("forged");
        std::fs::create_dir(&forged).unwrap();
        std::fs::write(forged.join("summary.json"), "{\"x\": 1}").unwrap();
        let link = root.join("link");
        std::os::unix::fs::symlink(&extra, &link).unwrap();
        for (target, why) in [
            (file.clone(), "not a Shoal run directory"),
            (mine.clone(), "holds other files"),
            (extra.clone(), "holds other files"),
            (forged.clone(), "holds other files"),
            (link.clone(), "symbolic link"),
            (PathBuf::new(), "empty"),
            (root.join("."), "must name a new directory"),
            (PathBuf::from("/"), "must name a new directory"),
            (std::env::current_dir().unwrap(), "current directory"),
        ] {
            let err = write_atomically(&target, run("2")).unwrap_err();
            assert!(err.to_string().contains(why), "{target:?}: {err}");
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
        assert_eq!(listing(&mine), ["scenario.toml"]);
        assert_eq!(listing(&extra), ["flows.parquet", "notes.txt", "summary.json"]);
        assert_eq!(listing(&root), ["forged", "link", "mine", "notes.txt", "run_plus_notes"]);
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
        write_atomically(&target, run("1")).unwrap();
        assert!(write_atomically(&target, disk_full).is_err());
        assert_eq!(listing(&root), ["run"]);
        assert_eq!(version(&target), "1");
        std::fs::remove_dir_all(root).unwrap();
    }

    /// A process id that is not running: a child that has exited and been reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn leftovers_of_killed_runs_are_tidied_and_old_results_restored() {
        let root = scratch("leftovers");
        let dead = dead_pid();
        // Killed between moving the old results aside and renaming the new ones in.
        let target = root.join("run");
        let aside = root.join(format!(".run.old-{dead}"));
        std::fs::create_dir(&aside).unwrap();
        run("old")(&aside).unwrap();
        let half = root.join(format!(".run.tmp-{dead}"));
        std::fs::create_dir(&half).unwrap();
        write(&half, "flows.parquet", "PAR1 half").unwrap();
        // Not ours to delete: another name, a live process, files that are not run files.
        let other = root.join(format!(".other.tmp-{dead}"));
        let live = root.join(".run.tmp-1"); // pid 1 always runs
        let foreign = root.join(format!(".run.old-{}", dead_pid()));
        for dir in [&other, &live, &foreign] {
            std::fs::create_dir(dir).unwrap();
        }
        write(&foreign, "thesis.tex", "mine").unwrap();
        write_atomically(&root.join("unrelated"), run("x")).unwrap();
        assert!(!target.exists() && half.exists(), "only leftovers of the same name are touched");
        // The old results come back before anything else, even if this write then fails.
        assert!(write_atomically(&target, disk_full).is_err());
        assert_eq!(version(&target), "old");
        assert!(!half.exists() && !aside.exists());
        write_atomically(&target, run("new")).unwrap();
        assert_eq!(version(&target), "new");
        assert!(other.exists() && live.exists() && foreign.exists(), "{:?}", listing(&root));
        std::fs::remove_dir_all(root).unwrap();
    }
}
