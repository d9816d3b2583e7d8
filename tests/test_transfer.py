"""agents/ppo/transfer.py: a policy mapped onto another preset acts as its source did wherever
the two presets' features and actions mean the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.ppo.agent import load_policy
from agents.ppo.transfer import feature_map, transfer_policy
from blot_env import make_rules
from blot_env.engine import apply_action, deal_random, legal_actions
from blot_env.errors import ConfigError
from blot_env.observation import ObservationEncoder, privileged_features
from blot_env.state import Phase
from blot_env.view import seat_view

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "agents" / "data" / "ppo_bazar.pt"


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    out = tmp_path_factory.mktemp("transfer") / "bazar-app_from_bazar.pt"
    report = transfer_policy(SOURCE, "bazar-app", out)
    return out, report


def test_every_bazar_app_feature_and_action_has_a_bazar_source(moved):
    _, report = moved
    assert report["source_preset"] == "bazar" and report["preset"] == "bazar-app"
    assert (report["obs_mapped"], report["obs_size"]) == (472, 472)
    assert (report["actions_mapped"], report["num_actions"]) == (125, 125)
    from agents.board_pool import weights_digest
    from agents.registry import make_agent

    assert report["source_digest"] == weights_digest(make_agent("ppo", "bazar"))


def test_transfer_is_reproducible(moved, tmp_path):
    out, _ = moved
    again = tmp_path / "again.pt"
    transfer_policy(SOURCE, "bazar-app", again)
    a, b = (torch.load(p, map_location="cpu", weights_only=True)["policy"] for p in (out, again))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_map_rescales_bid_values_and_matches_bids_by_name():
    src = ObservationEncoder(make_rules("bazar"))
    dst = ObservationEncoder(make_rules("bazar-app"))
    fm = feature_map(src, dst)
    cv = dst.piece("contract_value").offset
    assert fm.obs_src[cv] == src.piece("contract_value").offset
    assert fm.obs_scale[cv] == pytest.approx(25 / 80)          # value_scale 25 (bazar-app) over 80 (bazar)
    bid = dst.layout.strings.index("bid 24S")
    assert src.layout.strings[fm.act_src[bid]] == "bid 24S"
    sb = dst.piece("standing_bid").offset + dst._high_pos[bid]
    assert fm.obs_src[sb] == src.piece("standing_bid").offset + src._high_pos[src.layout.strings.index("bid 24S")]


def test_transferred_actor_and_critic_equal_the_source_on_mapped_observations(moved):
    out, _ = moved
    net_s, enc_s, *_ = load_policy(SOURCE, "bazar")
    net_d, enc_d, *_ = load_policy(out, "bazar-app")
    fm = feature_map(enc_s, enc_d)
    mapped = fm.act_src >= 0
    rng = np.random.default_rng(3)
    cfg = make_rules("bazar-app")
    checked = {Phase.AUCTION: 0, Phase.PLAY: 0}
    for d in range(6):
        state = deal_random(cfg, rng, d % 4)
        while legal_actions(state):
            x_d = enc_d.encode(seat_view(state, state.seat))
            x_s = np.zeros(enc_s.size, dtype=np.float32)
            x_s[fm.obs_src] = x_d * fm.obs_scale
            priv = torch.from_numpy(privileged_features(state, state.seat)[None])
            with torch.no_grad():
                ld = net_d.logits(torch.from_numpy(x_d[None]))[0]
                ls = net_s.logits(torch.from_numpy(x_s[None]))[0]
                vd = net_d.critic_value(torch.from_numpy(x_d[None]), priv)
                vs = net_s.critic_value(torch.from_numpy(x_s[None]), priv)
            torch.testing.assert_close(ld[mapped], ls[fm.act_src[mapped]], rtol=1e-5, atol=1e-4)
            torch.testing.assert_close(vd, vs, rtol=1e-5, atol=1e-4)
            checked[state.phase] = checked.get(state.phase, 0) + 1
            state = apply_action(state, int(rng.choice(legal_actions(state))))
    assert checked[Phase.AUCTION] >= 6 and checked[Phase.PLAY] >= 32   # calls, and the cards of played deals


def test_bad_targets_raise_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match="4-player 'bazar' and 2-player 'duel'"):
        transfer_policy(SOURCE, "duel", tmp_path / "x.pt")
    with pytest.raises(ConfigError, match="already a 'bazar' policy"):
        transfer_policy(SOURCE, "bazar", tmp_path / "x.pt")
    with pytest.raises(FileNotFoundError, match="no policy file"):
        transfer_policy(tmp_path / "missing.pt", "bazar-app", tmp_path / "x.pt")
    assert not (tmp_path / "x.pt").exists()


def test_script_reports_and_refuses(tmp_path):
    script = [sys.executable, str(REPO / "scripts" / "transfer_policy.py"), str(SOURCE)]
    ok = subprocess.run([*script, "--preset", "belote", "--out", str(tmp_path / "b.pt")],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    assert "of 414 input features" in ok.stdout and (tmp_path / "b.pt").is_file()
    load_policy(tmp_path / "b.pt", "belote")                     # loads as a belote policy
    bad = subprocess.run([*script, "--preset", "nope", "--out", str(tmp_path / "n.pt")],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "unknown preset 'nope'" in bad.stderr and "Traceback" not in bad.stderr
