"""Figures from a small sweep: PNG and PDF, from Python and from `shoal plot`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import shoal
from conftest import CliRunner, run_cli
from shoal import plot

SWEEP = {
    "name": "figs",
    "scenario": {
        "topology": {"hosts": 8},
        "workload": {"cdf": "websearch", "flows": 30},
        "run": {"sample_interval": "20us"},
    },
    "schemes": {
        "k200": {"switch.marking.cutoff.k": "200KB"},
        "k720": {"switch.marking.cutoff.k": "720KB"},
    },
    "axes": {"workload.load": [0.3, 0.6], "seeds": [1, 2]},
}


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    store = tmp_path_factory.mktemp("plots") / "store"
    return store, shoal.sweep(SWEEP, jobs=1, progress=False, store=store)


def _is_png(path: Path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _lines(fig: object) -> dict[str, np.ndarray]:
    out = {}
    for i, ax in enumerate(fig.axes):  # type: ignore[attr-defined]
        for line in ax.get_lines():
            if not line.get_label().startswith("_"):
                title = ax.get_title() or str(i)
                out[f"{title}|{line.get_label()}"] = np.asarray(line.get_ydata(), float)
    return out


def test_fct_vs_load_values_and_normalization(swept: tuple[Path, pd.DataFrame]) -> None:
    _, df = swept
    fig = plot.fct_vs_load(df)
    assert len(fig.axes) == 6  # (mean, p99) x (small, medium, large)
    lines = _lines(fig)
    expected = df[df.scheme == "k200"].groupby("workload.load")["small_p99_fct_ns"].mean()
    # One time unit serves the whole figure; read it back from the axis label.
    unit = fig.axes[0].get_ylabel().removeprefix("FCT (").removesuffix(")")
    scale = {"ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]
    np.testing.assert_allclose(lines["small flows: 99th pct|k200"], expected.to_numpy() / scale)
    assert fig.axes[0].get_ylabel().startswith("FCT (")
    norm = _lines(plot.fct_vs_load(df, normalize_to="k720"))
    np.testing.assert_allclose(norm["small flows: mean|k720"], [1.0, 1.0])
    with pytest.raises(plot.PlotError, match="no group named"):
        plot.fct_vs_load(df, normalize_to="nope")
    with pytest.raises(plot.PlotError, match="varies"):
        plot.fct_vs_load(df, by=None)  # would average the two schemes together


def test_every_figure_as_png_and_pdf(swept: tuple[Path, pd.DataFrame], tmp_path: Path) -> None:
    store, df = swept
    at = df[df["workload.load"] == 0.6]
    flows = plot.sweep_flows(store, at)
    samples = plot.sweep_samples(store, at)
    assert {"scheme", "seed", "slowdown"} <= set(flows.columns) and len(flows) == 4 * 30
    assert not samples.empty
    figures = {
        "fct_vs_load": plot.fct_vs_load(df, normalize_to="k720"),
        "loss_vs_load": plot.loss_vs_load(df),
        "slowdown_vs_size": plot.slowdown_vs_size(flows),
        "fct_cdf": plot.fct_cdf(flows),
        "fct_cdf_small": plot.fct_cdf(flows, bucket="small"),
        "buffer_cdf": plot.buffer_cdf(samples),
    }
    for name, fig in figures.items():
        png, pdf = plot.save(fig, tmp_path / name)
        assert _is_png(png) and png.stat().st_size > 10_000, name
        assert pdf.read_bytes()[:5] == b"%PDF-", name
        # Readable in print: labelled axes with units, fonts not smaller than 8 pt.
        for ax in fig.axes:
            assert ax.get_xlabel() or ax.get_subplotspec().rowspan.stop < 2, name
            for label in (ax.xaxis.label, ax.yaxis.label, ax.title):
                if label.get_text():
                    assert label.get_fontsize() >= 8, name
        assert fig.legends, name  # one line per scheme, named
    slow = _lines(figures["slowdown_vs_size"])
    assert len(slow) == 4 and all(np.nanmin(v) >= 0.99 for v in slow.values())


def test_plot_cli(
    swept: tuple[Path, pd.DataFrame],
    shoal_cli: CliRunner,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store, _ = swept
    proc = shoal_cli(
        "plot",
        "fct-vs-load",
        store,
        "--x",
        "workload.load",
        "--by",
        "scheme",
        "--normalize-to",
        "k200",
        "--out",
        tmp_path / "fct.png",
    )
    assert proc.returncode == 0, proc.stderr
    assert _is_png(tmp_path / "fct.png")
    code, _, err = run_cli(
        capsys,
        "plot",
        "slowdown-vs-size",
        store,
        "--where",
        '"workload.load" = 0.3',
        "--out",
        tmp_path / "sd",
    )
    assert code == 0, err
    assert (tmp_path / "sd.png").is_file() and (tmp_path / "sd.pdf").is_file()
    code, _, err = run_cli(capsys, "plot", "fct-cdf", store, "--out", tmp_path / "cdf.png")
    assert code == 2 and "workload.load" in err  # varies: filter or --by
    assert "Traceback" not in err
