"""Every experiment's quick mode runs end to end, as the issues ask ("quick modes run in
CI"): all runs succeed, the figures are drawn, and every claim gets a Shoal value to set
beside the paper's (a claim whose runs only the full mode makes, `modes = ["full"]`, is
left out of the quick table). Whether a claim holds is the experiment write-ups'
business; here a missing value (a claim whose metric or selection matches no run) fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoal.reproduce import list_experiments, reproduce

QUICK = sorted(e.id for e in list_experiments() if e.id != "bcc/fig3")  # fig3: test_reproduce


@pytest.mark.parametrize("exp_id", QUICK)
def test_quick_mode_runs(exp_id: str, tmp_path: Path) -> None:
    result = reproduce(exp_id, mode="quick", jobs=2, store=tmp_path / "store", progress=False)
    failed = result.runs[result.runs["status"] != "ok"]
    assert failed.empty, failed[["key", "error"]].to_string()
    if result.experiment.figures:
        assert result.figures and all(f.stat().st_size > 1000 for f in result.figures)
    else:  # a formula with nothing to draw (whitepaper/theory)
        assert not result.figures
    missing = [c.what for c in result.claims if c.shoal is None]
    assert not missing, f"claims without a Shoal value: {missing}"
