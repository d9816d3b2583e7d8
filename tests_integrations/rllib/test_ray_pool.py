"""Boards on a Ray cluster (agents/eval/board_pool.py; runs in .venv-rllib, scripts/ci_integrations.sh).

A local Ray instance is started with ``ray start --head --block`` (stopped at the end by a
SIGTERM to that one process, which drains and stops what it started); ``blot-eval`` (a
plain run, ``--save`` and ``--league``) then plays on it through ``--address`` and must give
the boards that this machine gives. The instance keeps to itself: its own temporary
folder (so that it leaves no ``/tmp/ray/ray_current_cluster`` behind for other ``ray.init()``
calls to follow) and its own authentication token, passed to the clients.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from common import ROOT

from agents.eval.board_pool import load_records

RAY = Path(sys.executable).with_name("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_ENV = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
"""The environment of the instance and of its clients."""


@pytest.fixture(scope="module")
def ray_address():
    # a short folder: Ray puts its sockets there, and a socket path has at most 107 characters
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    log = Path(temp) / "start.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([str(RAY), "start", "--head", f"--port={_free_port()}", "--num-cpus=2",
                                 "--include-dashboard=false", f"--temp-dir={temp}", "--block"], stdout=out,
                                stderr=subprocess.STDOUT, env=_ENV, start_new_session=True)
    try:
        t0 = time.monotonic()
        address = None
        while address is None and time.monotonic() - t0 < 180 and proc.poll() is None:
            time.sleep(1)
            m = re.search(r"ray start --address='([^']+)'", log.read_text())
            address = m.group(1) if m else None
        assert address, f"ray start did not come up:\n{log.read_text()[-3000:]}"
        yield address
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        shutil.rmtree(temp, ignore_errors=True)


def _run(args: list[str]) -> str:
    p = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600, env=_ENV)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p.stdout


def _deltas(path: Path) -> dict:
    return {(r["agent"], r["vs"], r["index"]): r["board"].delta for r in load_records([path])}


def test_a_saved_run_on_ray_gives_the_local_boards(ray_address, tmp_path):
    on_ray, local = tmp_path / "ray.pkl", tmp_path / "local.pkl"
    common = ["-m", "agents.eval.cli", "--agent", "rules", "--vs", "random", "--boards", "6", "--split", "dev",
              "--no-progress"]
    _run([*common, "--address", ray_address, "--workers", "2", "--save", str(on_ray)])
    _run([*common, "--workers", "1", "--save", str(local)])
    assert len(_deltas(on_ray)) == 6 and _deltas(on_ray) == _deltas(local)
    assert {r["commit"] for r in load_records([on_ray])} == {r["commit"] for r in load_records([local])}


def test_a_plain_run_on_ray_gives_the_local_numbers(ray_address):
    common = ["-m", "agents.eval.cli", "--agent", "rules", "--vs", "random,rules", "--boards", "6", "--split", "dev",
              "--json", "--no-progress"]
    keys = ("agent", "opponent", "boards", "mean_board_score", "ci95", "diagnostics", "by_contract")
    on_ray, local = (json.loads(_run([*common, *extra]))["rows"] for extra in (["--address", ray_address], []))
    assert [{k: r[k] for k in keys} for r in on_ray] == [{k: r[k] for k in keys} for r in local]
    assert [r["boards"] for r in on_ray] == [6, 6]


def test_league_on_ray_gives_the_local_ratings(ray_address, tmp_path):
    league = ["-m", "agents.eval.cli", "--league", "random,rules,easy", "--boards", "8", "--round", "4",
              "--split", "dev", "--bootstrap", "100", "--no-progress"]
    _run([*league, "--address", ray_address, "--save", str(tmp_path / "ray.pkl")])
    _run([*league, "--workers", "1", "--save", str(tmp_path / "local.pkl")])
    assert _deltas(tmp_path / "ray.pkl") == _deltas(tmp_path / "local.pkl")
    on_ray, local = (json.loads((tmp_path / f"{x}.json").read_text()) for x in ("ray", "local"))
    assert on_ray["agents"] == local["agents"] and on_ray["boards"] == local["boards"] > 0
