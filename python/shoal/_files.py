"""Reading back the files Shoal writes (run directories, the results store): a damaged
file (truncated, overwritten, edited by hand) is a :class:`CorruptFileError` naming it,
never a JSON or Arrow traceback. Missing or unreadable files stay :class:`OSError`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CorruptFileError", "read_json", "read_parquet", "parquet_intact"]

_PARQUET_MAGIC = b"PAR1"


class CorruptFileError(ValueError):
    """A file Shoal wrote cannot be read back; the message names it and says why.

    Attributes:
        path: the file.
        reason: what is wrong with it.
    """

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"corrupt file {self.path}: {reason}")


def read_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object in ``path``.

    Raises:
        CorruptFileError: the file is not a JSON object.
        OSError: it cannot be read (missing, no permission).
    """
    content = Path(path).read_bytes()
    try:
        data = json.loads(content)
    except (ValueError, RecursionError) as exc:  # also UnicodeDecodeError
        raise CorruptFileError(path, f"not valid JSON ({_first_line(exc)})") from None
    if not isinstance(data, dict):
        raise CorruptFileError(path, f"expected a JSON object, found {type(data).__name__}")
    return data


def read_parquet(path: str | os.PathLike[str], columns: list[str] | None = None) -> pd.DataFrame:
    """The table in the Parquet file ``path`` (only ``columns``, when given).

    Raises:
        CorruptFileError: the file is not a readable Parquet file.
        OSError: it cannot be read (missing, no permission).
    """
    import pandas as pd
    import pyarrow as pa

    try:
        return pd.read_parquet(path, columns=columns)
    except OSError as exc:
        if exc.errno is not None:  # the system's error, not Arrow's "corrupt data"
            raise
        raise CorruptFileError(path, f"not a readable Parquet file ({_first_line(exc)})") from None
    except pa.ArrowException as exc:
        raise CorruptFileError(path, f"not a readable Parquet file ({_first_line(exc)})") from None


def parquet_intact(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts and ends as a Parquet file does (a cheap check that
    catches truncated and overwritten files without reading them)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(4) != _PARQUET_MAGIC:
                return False
            fh.seek(-4, os.SEEK_END)
            return fh.read(4) == _PARQUET_MAGIC
    except OSError:
        return False


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
