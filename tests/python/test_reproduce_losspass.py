"""``shoal reproduce losspass/...``: the LossPass paper's experiments resolve, fig3 runs
end to end in quick mode, and pushout protects the high-priority class (Algorithm 1)."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path

import pytest

import shoal
from shoal.reproduce import ANALYSES, ReproduceResult, find, list_experiments, reproduce

LOSSPASS = {"losspass/fig1", "losspass/fig3", "losspass/fig4", "losspass/fig5"}


def test_the_losspass_experiments_are_listed() -> None:
    assert {e.id for e in list_experiments()} >= LOSSPASS
    for exp_id in LOSSPASS:
        assert find(exp_id).analysis == "losspass.queries"


@pytest.mark.parametrize("exp_id", sorted(LOSSPASS))
@pytest.mark.parametrize("mode", ["quick", "full"])
def test_every_losspass_experiment_resolves(exp_id: str, mode: str) -> None:
    """Every run of every mode is a valid scenario (resolving does not simulate)."""
    from shoal._sweep import load_sweep, resolve_runs

    exp = find(exp_id)
    runs = resolve_runs(load_sweep(exp.sweep_spec(mode)))
    assert runs and all(r.error is None for r in runs), [r.error for r in runs if r.error]
    if mode == "quick":
        assert len(runs) <= 18
    assert exp.sweep_spec("quick") != exp.sweep_spec("full")


@pytest.fixture(scope="module")
def fig3_quick(tmp_path_factory: pytest.TempPathFactory) -> ReproduceResult:
    from shoal.reproduce import losspass

    store = tmp_path_factory.mktemp("losspass-fig3") / "store"
    saved = dict(ANALYSES)  # register only our analysis; restore whatever was there
    ANALYSES.update(losspass.ANALYSES)
    try:
        return reproduce("losspass/fig3", mode="quick", jobs=2, store=store, progress=False)
    finally:
        ANALYSES.clear()
        ANALYSES.update(saved)


def test_fig4_quick_pushout_spares_the_small_flows(tmp_path: Path) -> None:
    """LossPass Fig. 4's testbed: PIAS and LossPass differ only in what a full port
    buffer refuses (Algorithm 1: a high-priority arrival pushes out the low-priority
    tail), so LossPass pushes packets out, and its small flows, whose packets are all
    high-priority, finish no later on average than under PIAS at every load."""
    runs = reproduce("losspass/fig4", store=tmp_path / "store", jobs=1, progress=False).runs
    assert (runs["status"] == "ok").all()
    small = runs.pivot_table(index="workload.load", columns="scheme", values="small_mean_fct_ns")
    assert (small["losspass"] <= small["pias"]).all(), small
    pushed = runs.set_index(["scheme", "workload.load"])["pushouts"]
    assert pushed["losspass"].max() > 0
    assert (pushed["pias"] == 0).all()


def test_fig3_quick_end_to_end(fig3_quick: ReproduceResult) -> None:
    res = fig3_quick
    assert (res.runs["status"] == "ok").all()
    assert (res.out / "throughput_qct.png").stat().st_size > 1000
    assert all(c.text != "n/a" for c in res.claims), [c.what for c in res.claims if c.text == "n/a"]
    queries = res.runs[res.runs["workload.start"] == "10ms"]
    assert (queries["queries_finished"] == queries["queries"]).all()
    assert (queries["queries"] == 15).all()


def test_fig3_losspass_has_the_lowest_qct(fig3_quick: ReproduceResult) -> None:
    """The paper's Fig. 3: LossPass completes queries fastest. Mechanism: the query flows
    are high priority (first 1 MB), so strict priority serves them ahead of the long
    flows, and unlike PIAS a full buffer makes room for them by pushing out long-flow
    packets, so they lose fewer packets to the buffer the long flows keep full."""
    runs = fig3_quick.runs
    q = runs[runs["workload.start"] == "10ms"].set_index("scheme")["mean_qct_ns"]
    assert q["losspass"] < q["droptail"]
    assert q["losspass"] < q["pias"]
    assert q["losspass"] == q.min()
    # Only LossPass pushes packets out; the other schemes only refuse arrivals.
    push = runs[runs["workload.start"] == "10ms"].set_index("scheme")["pushouts"]
    assert push["losspass"] > 0
    assert (push.drop("losspass") == 0).all()


def test_losspass_never_drops_a_burst_that_fits_beside_the_long_flows() -> None:
    """Algorithm 1: a high-priority packet that finds the port buffer full evicts
    low-priority tail packets while the low queue holds at least its size. Two 32 KB
    answers (64 KB at most in the high queue) into a 128 KB port buffer kept full by
    two NewReno long flows: the low queue always holds >= 64 KB, so no query packet is
    ever lost with LossPass. PIAS (same tagging and priority queues, no pushout) drops
    them at the full buffer and times out on RTOmin = 10 ms. The queries start once the
    long flows have sent their first MB (PIAS's high-priority bytes, 8.4 ms at line rate,
    more if an early loss met the 10 ms RTOmin): before that they share the high queue."""
    base = copy.deepcopy(find("losspass/fig3").sweep["scenario"])
    base["workload"].update(size="32KB", repeats=20, period="25ms", start="50ms")
    base["run"]["stop_time"] = "560ms"
    out = {}
    for name, extra in (("pias", {}), ("losspass", {"admission": "losspass"})):
        s = copy.deepcopy(base)
        s["switch"].update(queues=2, scheduler="strict_priority", **extra)
        s["transport"]["pias_thresholds"] = ["1MB"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the long flows never finish
            res = shoal.run(s)
        flows = res.flows
        out[name] = (flows[flows["query"] >= 0], res.summary)
    lp_q, lp = out["losspass"]
    pias_q, pias = out["pias"]
    assert lp["drops"]["pushout"] > 0  # the buffer was full and long-flow bytes were evicted
    assert lp_q["retransmits"].sum() == 0 and lp_q["timeouts"].sum() == 0
    assert lp["queries"]["finished"] == 20
    # QCT ~ 64 KB at 1 Gbps (0.53 ms) + one base RTT (0.5 ms) + slow start: no RTO in it.
    assert lp["queries"]["p99_qct_ns"] < 2e6
    assert pias["drops"]["pushout"] == 0
    assert pias_q["retransmits"].sum() > 0
    assert pias["queries"]["mean_qct_ns"] > 5 * lp["queries"]["mean_qct_ns"]


def test_readme_points_to_the_package() -> None:
    repo = Path(__file__).resolve().parents[2]
    readme = repo / "experiments" / "losspass" / "README.md"
    if readme.is_file():
        assert "python/shoal/experiments/losspass" in readme.read_text()


def test_fig3_is_one_point_per_scheme_on_the_papers_axes(fig3_quick: ReproduceResult) -> None:
    """Fig. 3 plots throughput against average QCT: the schemes are categories, so no
    line may run from one to the next, and every scheme is named."""
    from shoal import plot
    from shoal.reproduce.losspass import throughput_qct_figure

    runs = fig3_quick.runs[fig3_quick.runs["status"] == "ok"]
    fig = throughput_qct_figure(runs, fig3_quick.store, title="Fig. 3")
    (ax,) = fig.axes
    points = ax.get_lines()
    assert len(points) == runs["scheme"].nunique() == 9
    assert all(len(line.get_xdata()) == 1 for line in points), "a line joins schemes"
    names = [t.get_text() for t in fig.legends[0].get_texts()]
    assert names == [
        "DropTail",
        "ECN K=2",
        "ECN K=4",
        "ECN K=10",
        "ECN K=20",
        "ECN K=45",
        "ECN K=65",
        "PIAS",
        "LossPass",
    ]
    lp = [line for line in points if line.get_label() == "LossPass"][0]
    queries = runs[(runs["scheme"] == "losspass") & (runs["workload.start"] == "10ms")]
    assert lp.get_xdata()[0] == pytest.approx(queries["mean_qct_ns"].iloc[0] / 1e6)
    assert plot.text_overlaps(fig) == []
