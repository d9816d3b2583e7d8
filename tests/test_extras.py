"""A console script that needs an optional extra says which one to install (a plain
``pip install -e .`` has only the base dependencies): agents/extras.py, agents/console.py."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO

from agents import console, extras
from agents.registry import make_agent


def _scripts() -> dict[str, str]:
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["scripts"]


def test_console_scripts_point_at_checked_entries():
    scripts = _scripts()
    assert scripts == {"blot-train": "agents.console:blot_train", "blot-eval": "agents.console:blot_eval",
                       "blot-replay": "blot_env.replay:main", "blot-play": "agents.play.cli:main",
                       "blot-view": "agents.view.cli:main"}
    for target in scripts.values():
        module, func = target.split(":")
        assert callable(getattr(__import__(module, fromlist=[func]), func))


def _without(monkeypatch, *names: str) -> None:
    for n in names:
        monkeypatch.setitem(sys.modules, n, None)  # importlib.util.find_spec now reports it missing


def test_blot_train_without_the_train_extra_names_it(monkeypatch, capsys):
    _without(monkeypatch, "yaml")
    monkeypatch.setattr(sys, "argv", ["blot-train", "--config", "configs/ppo_tiny.yaml"])
    assert console.blot_train() == 1
    err = capsys.readouterr().err
    assert err.startswith("blot-train: blot-train needs yaml, which the train extra provides; ")
    assert "pip install -e '.[train]'" in err and "Traceback" not in err


def test_ppo_agent_without_torch_names_the_extra(monkeypatch):
    _without(monkeypatch, "torch")
    with pytest.raises(extras.MissingExtraError, match=r"agent 'ppo' needs torch, .*pip install -e '\.\[train\]'"):
        make_agent("ppo", "bazar")


def test_blot_eval_plot_without_matplotlib_names_the_extra(monkeypatch, capsys):
    _without(monkeypatch, "matplotlib")
    monkeypatch.setattr(sys, "argv", ["blot-eval", "--agent", "random", "--plot", "x.png"])
    assert console.blot_eval() == 1
    assert "blot-eval --plot needs matplotlib, which the train extra provides" in capsys.readouterr().err


def test_blot_train_without_yaml_in_a_fresh_interpreter():
    """The way a user meets it: the entry point in a process where pyyaml cannot be imported."""
    code = "import sys; sys.modules['yaml'] = None; from agents.console import blot_train; sys.exit(blot_train())"
    p = subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "install the train extra: pip install -e '.[train]'" in p.stderr


def test_blot_play_and_blot_view_name_their_extras(monkeypatch, capsys):
    from agents.play.cli import main as play_main
    from agents.view.cli import main as view_main

    _without(monkeypatch, "rich", "rich.console", "uvicorn")
    assert play_main([]) == 2
    assert 'pip install "blot-env[play]"' in capsys.readouterr().err
    assert view_main(["tests/golden/passed_out.json"]) == 2
    assert 'pip install "blot-env[view]"' in capsys.readouterr().err
