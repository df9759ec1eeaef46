"""The HTML report of a sweep, rendered by headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import shoal
from shoal.report import write_report

SWEEP = {
    "name": "rep",
    "scenario": {"topology": {"hosts": 8}, "workload": {"cdf": "websearch", "flows": 20}},
    "schemes": {
        "k200": {"switch.marking.cutoff.k": "200KB"},
        "k720": {"switch.marking.cutoff.k": "720KB"},
    },
    "axes": {"workload.load": [0.3, -1.0, 0.6]},  # the middle load fails
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("report") / "store"
    shoal.sweep(SWEEP, jobs=1, progress=False, store=store)
    return write_report(store)


def test_report_content(report: Path) -> None:
    assert report.name == "report.html" and report.parent.name == "rep"
    text = report.read_text()
    assert "<h2>Parameters</h2>" in text and "switch.marking.cutoff.k" in text
    assert text.count('<tr class="failed">') == 2 and "workload.load" in text
    assert text.count("data:image/png;base64,") >= 4
    for name in ("fct_vs_load", "loss_vs_load", "slowdown_vs_size", "fct_cdf"):
        assert (report.parent / f"{name}.png").is_file()
        assert (report.parent / f"{name}.pdf").is_file()


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(
    _chromium() is None,
    reason="chromium is not installed (`apt-get install -y chromium`; .ci/run installs it)",
)
def test_report_renders_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    browser = _chromium()
    assert browser is not None
    flags = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run(
        [*flags, "--virtual-time-budget=5000", "--dump-dom", report.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    match = re.search(r'data-images-ok="(\d+)/(\d+)"', dom.stdout)
    assert match, "the page's load handler did not run"
    ok, total = int(match.group(1)), int(match.group(2))
    assert total >= 4 and ok == total  # every figure decoded
    assert "<table" in dom.stdout and "k720" in dom.stdout
    shot = tmp_path / "report.png"
    subprocess.run(
        [*flags, "--window-size=1200,1600", f"--screenshot={shot}", report.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
