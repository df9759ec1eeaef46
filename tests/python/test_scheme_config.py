"""Per-scheme configuration sections through the Python entry points: old spellings run
the same scenario as their new keys, with a warning naming each new key, and errors inside
a scheme's section name the full key path."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import shoal
from shoal import ScenarioError, ShoalWarning, _core

OLD = {
    "switch": {
        "queues": 2,
        "scheduler": "dwrr",
        "dwrr_quantum": "18KB",
        "dwrr_weights": [2, 1],
        "ecn": {"k": "60KB", "at": "enqueue"},
        "marking": "bcc",
        "bcc": {"h": "6us"},
        "shared_ecn": {"pmax": 0.05},
    },
    "transport": {"cc": "dctcp", "dctcp_g": 0.125},
}
NEW = {
    "switch": {
        "queues": 2,
        "scheduler": {"kind": "dwrr", "quantum": "18KB", "weights": [2, 1]},
        "ecn": {"at": "enqueue"},
        "marking": {"cutoff": {"k": "60KB"}, "bcc": {"h": "6us", "pmax": 0.05}},
    },
    "transport": {"cc": {"kind": "dctcp", "g": 0.125}},
}


def test_old_spellings_resolve_as_the_new_keys_with_warnings() -> None:
    old, old_warnings = _core.resolve(json.dumps(OLD), True)
    new, new_warnings = _core.resolve(json.dumps(NEW), True)
    assert json.loads(old) == json.loads(new)
    assert new_warnings == []
    for old_key, new_key in [
        ("switch.dwrr_quantum", "switch.scheduler.quantum"),
        ("switch.ecn.k", "switch.marking.cutoff.k"),
        ("switch.bcc.h", "switch.marking.bcc.h"),
        ("switch.shared_ecn.pmax", "switch.marking.bcc.pmax"),
        ("transport.dctcp_g", "transport.cc.g"),
    ]:
        assert any(w.startswith(f"{old_key}: is {new_key} now") for w in old_warnings), old_warnings


def test_an_old_spelling_runs_the_same_simulation(tiny: Path) -> None:
    with (
        pytest.warns(ShoalWarning, match=r"^switch\.ecn\.k: is switch\.marking\.cutoff\.k now"),
        pytest.warns(ShoalWarning, match=r"^transport\.dctcp_g: is transport\.cc\.g now"),
    ):
        old = shoal.run(tiny, set=["switch.ecn.k=20KB", "transport.dctcp_g=0.25"])
    new = shoal.run(tiny, set=["switch.marking.cutoff.k=20KB", "transport.cc.g=0.25"])
    assert old.scenario == new.scenario
    assert old.flows.equals(new.flows)


def test_a_kind_alone_is_a_scheme_without_a_warning(tiny: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ShoalWarning)
        result = shoal.run(tiny, set=["switch.admission=losspass", "transport.cc=newreno"])
    assert result.scenario["switch"]["admission"] == {"kind": "losspass"}
    assert result.scenario["transport"]["cc"] == {"kind": "newreno"}


@pytest.mark.parametrize(
    ("sets", "path"),
    [
        (["switch.admission.kind=lqd", "switch.admission.alpha=2"], "switch.admission.alpha"),
        (["switch.admission.kind=drop_tail"], "switch.admission.kind"),
        (["transport.cc.g=fast"], "transport.cc.g"),
        (["transport.cc.g=2"], "transport.cc.g"),
        (["switch.marking.bcc.h=8parsecs"], "switch.marking.bcc.h"),
        (["switch.scheduler=dwrr", "switch.dwrr_quantum=8parsecs"], "switch.dwrr_quantum"),
    ],
)
def test_errors_name_the_key_path_inside_scheme_sections(
    tiny: Path, sets: list[str], path: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        shoal.run(tiny, set=sets)
    assert str(info.value).startswith(f"{path}:"), info.value


def test_unknown_kinds_list_the_registered_ones() -> None:
    with pytest.raises(ScenarioError) as info:
        _core.resolve(json.dumps({"transport": {"cc": {"kind": "cubic"}}}))
    assert 'accepted: "dctcp", "newreno", "ecn_star"' in str(info.value)


def test_defaults_text_uses_the_new_keys() -> None:
    text = _core.default_scenario_toml()
    assert "[switch.admission]" in text and "[switch.marking]" in text
    assert "dwrr_quantum" not in text and "dctcp_g" not in text
