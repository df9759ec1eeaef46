"""Writing single output files (traces, figures, reports) without ever destroying the
user's own.

Shoal replaces a file only when it is recognizably one Shoal wrote earlier (each kind of
output says how it recognizes its own); anything else at the path (a user's file, a
directory, a link, a device) is refused with an ``OSError`` naming it. The new content
goes to a hidden temporary file next to the target (``.NAME.tmp-PID``), which is renamed
over it only once complete, so an interrupted write leaves the old file or the new one.
Temporary files of processes that no longer run are tidied on the next write.

Run directories follow the same rule; the core implements it (``_core.check_output_dir``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

__all__ = ["SHOAL_MARK", "check_output_file", "replace_file", "pid_alive", "has_mark"]

#: The creator mark Shoal puts in the files it writes (figure metadata, report head).
SHOAL_MARK = "Shoal"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (True when it cannot be told)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):
        return False
    return True


def has_mark(path: Path, mark: bytes) -> bool:
    """Whether the file at ``path`` contains ``mark`` (figures are small; read whole)."""
    try:
        return mark in path.read_bytes()
    except OSError:
        return False


def check_output_file(target: Path, is_ours: Callable[[Path], bool], what: str) -> None:
    """Raise ``OSError`` unless ``target`` may be written: it does not exist, or it is a
    regular file (not a link) that ``is_ours`` recognizes as an earlier Shoal ``what``."""
    if not os.fspath(target):
        raise OSError(f"the output path is empty; name a {what} file")
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise OSError(f"refusing to replace a symbolic link with a {what}: {target}")
    if not stat.S_ISREG(mode):
        raise OSError(f"refusing to replace what is not a regular file with a {what}: {target}")
    if not is_ours(target):
        raise OSError(
            f"refusing to replace a file that is not a {what} Shoal wrote; "
            f"choose another path or remove it: {target}"
        )


def _tidy(target: Path) -> None:
    """Delete ``.NAME.tmp-PID`` files that processes no longer running left next to
    ``target``."""
    prefix = f".{target.name}.tmp-"
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(prefix) :] if entry.name.startswith(prefix) else ""
        stale = pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid))
        if stale and entry.is_file() and not entry.is_symlink():
            entry.unlink(missing_ok=True)


def replace_file(
    target: Path, write: Callable[[Path], None], is_ours: Callable[[Path], bool], what: str
) -> Path:
    """Write ``target`` atomically with ``write(temporary_path)``, after
    :func:`check_output_file`; missing parent directories are created. Returns ``target``."""
    check_output_file(target, is_ours, what)
    target.parent.mkdir(parents=True, exist_ok=True)
    _tidy(target)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        check_output_file(target, is_ours, what)  # it may have appeared meanwhile
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target
