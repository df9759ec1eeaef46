"""The local workers of a sweep: ``python -m shoal._worker PARENT_PID`` processes.

A worker reads resolved scenarios from its stdin, simulates them one at a time and
writes each outcome (:func:`simulate`'s dict, pickled) to its stdout; every message is
one frame, an 8-byte length then the payload. :func:`run_pool` runs a pool of them.

Workers are plain subprocesses rather than a :mod:`multiprocessing` pool, because:

* a "spawn" pool re-imports the caller's ``__main__`` in every worker, so a script that
  calls ``shoal.sweep()`` without an ``if __name__ == "__main__":`` guard (as the README
  shows it) ran itself again in each worker; a worker here imports only Shoal;
* a pool marks every pending run failed when one worker dies (``BrokenProcessPool``);
  here only the run of the dead worker fails, and a fresh worker takes the next run;
* a worker never outlives its parent: it asks Linux to kill it when the parent dies
  (``PR_SET_PDEATHSIG``), watches its parent's pid elsewhere, and ends at EOF on stdin.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import queue
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import IO, Any

__all__ = ["simulate", "run_pool", "WorkerDied"]

_HEADER = struct.Struct(">Q")
#: Seconds between two looks at the parent's pid (where PR_SET_PDEATHSIG is missing).
PARENT_POLL_S = 0.2
#: Seconds a worker gets to exit after EOF on its stdin before it is killed.
EXIT_TIMEOUT_S = 5.0
_PR_SET_PDEATHSIG = 1


def _reset_peak_rss() -> None:
    """Start this process's peak resident set over (Linux: ``clear_refs`` 5), so that
    the peak after a run is not an earlier run's peak in the same worker (memory an
    earlier run left allocated still counts)."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _peak_rss_mb() -> float | None:
    """This process's peak resident set in MB since :func:`_reset_peak_rss` (Linux), or
    since it started (other systems; None where unknown)."""
    with contextlib.suppress(OSError, ValueError, StopIteration):
        status = Path("/proc/self/status").read_text().splitlines()
        line = next(line for line in status if line.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


class WorkerDied(RuntimeError):
    """A worker process ended before it sent the outcome of its run."""


def simulate(resolved_json: str) -> dict[str, Any]:
    """Run one resolved scenario; return its run files as bytes (the worker's task).

    Never raises for a failed simulation: returns ``{"status": "failed", "error": ...}``.
    """
    import warnings

    from shoal._run import run_to_dir
    from shoal.store import RUN_FILES, now_iso

    started = time.perf_counter()
    info = {"host": socket.gethostname(), "pid": os.getpid(), "started_at": now_iso()}
    _reset_peak_rss()
    try:
        with tempfile.TemporaryDirectory(prefix="shoal-run-") as tmp:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run = Path(tmp) / "run"
                path, summary = run_to_dir(json.loads(resolved_json), run, check_input=False)
            files = {p.name: p.read_bytes() for p in path.iterdir() if p.name in RUN_FILES}
        return {
            "status": "ok",
            "files": files,
            "warnings": list(summary["warnings"]),
            "wall_time_s": time.perf_counter() - started,
            "peak_rss_mb": _peak_rss_mb(),
            **info,
        }
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - PyO3 panics derive from BaseException
        return {
            "status": "failed",
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(),
            "wall_time_s": time.perf_counter() - started,
            **info,
        }


# -- framing -------------------------------------------------------------------------


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, n: int) -> bytes | None:
    """``n`` bytes from ``fd``; ``None`` at EOF before the first byte.

    Raises:
        EOFError: EOF after some bytes (the writer died mid-message).
    """
    chunks: list[bytes] = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            if chunks:
                raise EOFError("truncated message")
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _send(fd: int, payload: bytes) -> None:
    _write_all(fd, _HEADER.pack(len(payload)) + payload)


def _recv(fd: int) -> bytes | None:
    """The next message, or ``None`` when the writer closed its end between messages."""
    header = _read_exact(fd, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    payload = _read_exact(fd, size) if size else b""
    if payload is None:
        raise EOFError("truncated message")
    return payload


# -- the parent's side ---------------------------------------------------------------


def _package_root() -> str:
    """The folder holding this ``shoal`` package (so workers import the same one)."""
    return str(Path(__file__).resolve().parent.parent)


class Worker:
    """One worker process, seen from its parent: one run at a time.

    The worker dies with the thread that started it (``PR_SET_PDEATHSIG`` is tied to
    the creating thread), so it is started, used and closed by one thread.
    """

    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (_package_root(), env.get("PYTHONPATH")) if p
        )
        # -P: the current directory is not put on sys.path (a stray shoal.py there
        # must not shadow the package). A process group of its own: a terminal's Ctrl-C
        # goes to the whole foreground group, and a worker still importing the package
        # (before main() ignores SIGINT) would die with a traceback on the user's
        # screen; the parent handles Ctrl-C and kills its workers.
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "shoal._worker", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            bufsize=0,
            process_group=0,
        )

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        return self.proc.stdin, self.proc.stdout

    def run(self, resolved_json: str) -> dict[str, Any]:
        """Simulate one scenario on this worker.

        Raises:
            WorkerDied: the worker ended before answering (killed, out of memory...).
        """
        stdin, stdout = self._pipes()
        try:
            _send(stdin.fileno(), resolved_json.encode())
            payload = _recv(stdout.fileno())
        except (OSError, EOFError):  # a closed pipe: the worker is gone
            payload = None
        if payload is None:
            raise WorkerDied(self._death())
        outcome: dict[str, Any] = pickle.loads(payload)
        return outcome

    def _death(self) -> str:
        """Why the worker ended (it closed its pipes, so it has exited or is exiting)."""
        try:
            code = self.proc.wait(timeout=EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.wait()
        if code < 0:
            try:
                name = f": {signal.Signals(-code).name}"
            except ValueError:
                name = ""
            return f"worker process died (signal {-code}{name})"
        return f"worker process exited with status {code} before finishing its run"

    def close(self, *, kill: bool = False) -> None:
        """Let the worker exit (EOF on its stdin), or kill it; either way reap it."""
        if kill:
            self.kill()
        stdin, stdout = self._pipes()
        with contextlib.suppress(OSError):  # a dead worker: nothing left to flush
            stdin.close()
        try:
            self.proc.wait(timeout=EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            self.proc.wait()
        stdout.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()


def _failed(error: str, tb: str | None = None) -> dict[str, Any]:
    return {"status": "failed", "error": error, "traceback": tb}


def run_pool(
    scenarios: Sequence[str], jobs: int
) -> Generator[tuple[int, dict[str, Any], int], None, None]:
    """Simulate resolved scenarios on ``jobs`` worker processes.

    Yields ``(index, outcome, runs still running)`` as each run finishes, every index
    once. A worker that dies fails its own run only (``worker process died (signal
    9: SIGKILL)``); a fresh worker takes the next. Closing the iterator early (an
    exception in the consumer, Ctrl-C) kills the workers.
    """
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    for index in range(len(scenarios)):
        todo.put(index)
    finished: queue.SimpleQueue[tuple[int, dict[str, Any]]] = queue.SimpleQueue()
    stopping = threading.Event()
    live: set[Worker] = set()
    lock = threading.Lock()

    def slot() -> None:
        """Take runs until none is left, on one worker at a time (replaced if it dies)."""
        worker: Worker | None = None
        try:
            while not stopping.is_set():
                try:
                    index = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    if worker is None:
                        worker = Worker()
                        with lock:
                            live.add(worker)
                    outcome = worker.run(scenarios[index])
                except Exception as exc:  # noqa: BLE001 - WorkerDied, or no worker at all
                    if worker is not None:  # in an unknown state: replace it
                        worker.close(kill=True)
                        with lock:
                            live.discard(worker)
                        worker = None
                    error = str(exc) if isinstance(exc, WorkerDied) else f"{exc!r}"
                    tb = None if isinstance(exc, WorkerDied) else traceback.format_exc()
                    outcome = _failed(error, tb)
                finished.put((index, outcome))
        finally:
            if worker is not None:
                worker.close()
                with lock:
                    live.discard(worker)

    threads = [
        threading.Thread(target=slot, name=f"shoal-worker-{i}", daemon=True)
        for i in range(min(jobs, len(scenarios)))
    ]
    for thread in threads:
        thread.start()
    clean = False
    try:
        for remaining in range(len(scenarios) - 1, -1, -1):
            index, outcome = finished.get()
            yield index, outcome, min(jobs, remaining)
        clean = True
    finally:
        stopping.set()
        if not clean:
            with lock:
                for worker in list(live):
                    worker.kill()
        for thread in threads:
            thread.join(timeout=EXIT_TIMEOUT_S + 1)


# -- the worker's side ---------------------------------------------------------------


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def _die_with_parent(parent: int) -> None:
    """End this process as soon as ``parent`` dies, even in the middle of a run."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watch below still ends it
    if os.getppid() != parent:  # it died before prctl took effect
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def main(argv: Sequence[str] | None = None) -> None:
    """The worker loop: simulate each scenario received; exit at EOF."""
    args = list(sys.argv[1:] if argv is None else argv)
    # Ctrl-C reaches the whole process group; the parent alone handles it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(int(args[0]))
    # The messages own the original stdin and stdout; anything else that prints (a
    # library, a warning) goes to stderr instead of corrupting them.
    tasks, results = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    try:
        while (payload := _recv(tasks)) is not None:
            outcome = simulate(payload.decode())
            _send(results, pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
    except (BrokenPipeError, EOFError):
        pass  # the parent is gone: nobody wants the outcome


if __name__ == "__main__":
    main()
