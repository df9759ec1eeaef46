//! Reading the input files a scenario names (a trace, a CDF, a topology).

/// The text of `file`, which must be a regular file of at most `max` bytes: a device, a
/// pipe or a huge file would otherwise be read until memory runs out (or forever).
pub(crate) fn read_regular_file(file: &str, max: u64) -> Result<String, String> {
    check_regular_file(file, max)?;
    std::fs::read_to_string(file).map_err(|e| e.to_string())
}

/// As `read_regular_file`, a reader of the file instead of its text.
pub(crate) fn open_regular_file(file: &str, max: u64) -> Result<std::io::BufReader<std::fs::File>, String> {
    check_regular_file(file, max)?;
    Ok(std::io::BufReader::new(std::fs::File::open(file).map_err(|e| e.to_string())?))
}

fn check_regular_file(file: &str, max: u64) -> Result<(), String> {
    let meta = std::fs::metadata(file).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > max {
        return Err(format!("{} bytes is too large (accepted: up to {max} bytes)", meta.len()));
    }
    Ok(())
}
