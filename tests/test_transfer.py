"""agents/ppo/transfer.py: a policy moved onto another preset or observation kind acts as its
source did wherever the two encodings' features and the presets' actions mean the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.eval.board_pool import weights_digest
from agents.ppo.agent import load_policy
from agents.ppo.config import config_from_saved, load_config
from agents.ppo.network import build_policy
from agents.ppo.trainer import save_policy
from agents.ppo.transfer import action_labels, feature_map, transfer_policy
from agents.registry import make_agent
from blot_env import PRESETS, make_rules
from blot_env.actions import layout_for
from blot_env.engine import apply_action, deal_random, legal_actions
from blot_env.errors import ConfigError
from blot_env.observation import KINDS, ObservationEncoder, privileged_features
from blot_env.state import Phase
from blot_env.view import seat_view

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "agents" / "data" / "ppo_bazar.pt"
TINY = REPO / "configs" / "ppo_tiny.yaml"


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    out = tmp_path_factory.mktemp("transfer") / "bazar-app_from_bazar.pt"
    report = transfer_policy(SOURCE, "bazar-app", out)
    return out, report


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("preset", list(PRESETS))
def test_feature_labels_name_every_column_once(preset, kind):
    enc = ObservationEncoder(make_rules(preset), kind)
    labels = enc.feature_labels()
    assert len(labels) == enc.size and len({lab for lab, _ in labels}) == enc.size
    assert all(div > 0 for _, div in labels)


def test_labels_relate_real_encodings_of_the_same_position():
    """bazar with automatic declarations and bazar-app reach the same positions by the same calls
    and cards (bids up to 24): every mapped bazar-app column must equal its bazar column times
    the divisor ratio, read from each preset's own encoder."""
    rs, rd = make_rules("bazar", declarations="auto"), make_rules("bazar-app")
    es, ed = ObservationEncoder(rs), ObservationEncoder(rd)
    fm = feature_map(es, ed)
    assert fm.obs_mapped == ed.size
    src_of = {lab: a for a, lab in enumerate(action_labels(es))}
    rng, checked = np.random.default_rng(5), 0
    for d in range(8):
        ss, sd = deal_random(rs, np.random.default_rng(d), d % 4), deal_random(rd, np.random.default_rng(d), d % 4)
        assert ss.hands == sd.hands
        while legal_actions(sd):
            xs, xd = es.encode(seat_view(ss, ss.seat)), ed.encode(seat_view(sd, sd.seat))
            np.testing.assert_allclose(xd, xs[fm.obs_src] / fm.obs_scale, atol=1e-6)
            checked += 1
            a = int(rng.choice(legal_actions(sd)))
            b = src_of[action_labels(ed)[a]]
            assert b in legal_actions(ss), (action_labels(ed)[a], ss.history)
            sd, ss = apply_action(sd, a), apply_action(ss, b)
    assert checked > 100


def test_every_bazar_app_feature_and_action_has_a_bazar_source(moved):
    _, report = moved
    assert report["source_preset"] == "bazar" and report["preset"] == "bazar-app"
    assert (report["obs_mapped"], report["obs_size"]) == (472, 472)
    assert (report["actions_mapped"], report["num_actions"]) == (125, 125)
    assert report["source_digest"] == weights_digest(make_agent("ppo", "bazar"))


def test_bids_of_other_units_and_their_values_do_not_map():
    src, dst = ObservationEncoder(make_rules("bazar")), ObservationEncoder(make_rules("belote"))
    fm = feature_map(src, dst)
    labels = action_labels(dst)
    bids = [a for a, s in enumerate(labels) if s.startswith("bid ")]
    assert bids and (fm.act_src[bids] == -1).all()          # belote's bid 80C is raw points, bazar's tp
    assert labels.index("bid 80C@raw") in bids
    for name in ("play JH", "pass", "contra", "recontra"):
        assert action_labels(src)[fm.act_src[labels.index(name)]] == name
    dl = [lab for lab, _ in dst.feature_labels()]
    assert fm.obs_src[dl.index("contract_value@raw")] == -1
    assert fm.obs_src[dl.index("last_call[1]:value@raw")] == -1
    assert fm.obs_src[dl.index("hand[5]")] == [lab for lab, _ in src.feature_labels()].index("hand[5]")


def test_map_rescales_by_divisors():
    fm = feature_map(ObservationEncoder(make_rules("bazar")), ObservationEncoder(make_rules("bazar-app")))
    dl = [lab for lab, _ in ObservationEncoder(make_rules("bazar-app")).feature_labels()]
    assert fm.obs_scale[dl.index("contract_value@tp")] == pytest.approx(25 / 80)
    e9, e8 = ObservationEncoder(make_rules("duel")), ObservationEncoder(make_rules("duel-app"))
    fm2 = feature_map(e9, e8)
    l8 = [lab for lab, _ in e8.feature_labels()]
    assert (e9.cfg.num_tricks, e8.cfg.num_tricks) == (9, 8)
    assert fm2.obs_scale[l8.index("tricks_won[0]")] == pytest.approx(8 / 9)


def _dense_source(tmp_path: Path) -> Path:
    cfg = load_config(TINY, ["network.input_layer=dense", "network.critic=privileged"])
    enc = ObservationEncoder(make_rules("bazar"))
    net = build_policy(cfg, enc, layout_for(make_rules("bazar")))
    with torch.no_grad():
        net.policy_head.weight.normal_(0.0, 0.5)             # logits that differ between positions
    path = tmp_path / "dense_bazar.pt"
    save_policy(net, cfg, path)
    return path


@pytest.mark.parametrize("layer", ["sparse", "dense"])
def test_moved_actor_and_critic_equal_the_source_on_mapped_observations(moved, layer, tmp_path):
    if layer == "sparse":
        source, out = SOURCE, moved[0]
    else:
        source, out = _dense_source(tmp_path), tmp_path / "dense_app.pt"
        transfer_policy(source, "bazar-app", out)
    net_s, enc_s, *_ = load_policy(source, "bazar")
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


def test_unmapped_rows_keep_the_fresh_initialisation(tmp_path):
    out = tmp_path / "belote.pt"
    transfer_policy(SOURCE, "belote", out)
    moved = torch.load(out, map_location="cpu", weights_only=True)
    src_file = torch.load(SOURCE, map_location="cpu", weights_only=True)
    cfg = config_from_saved({**src_file["config"], "preset": "belote"})
    fresh = build_policy(cfg, ObservationEncoder(make_rules("belote")), layout_for(make_rules("belote")))
    fm = feature_map(ObservationEncoder(make_rules("bazar")), ObservationEncoder(make_rules("belote")))
    bids = np.flatnonzero(fm.act_src == -1)
    torch.testing.assert_close(moved["policy"]["policy_head.weight"][bids], fresh.policy_head.weight[bids].detach())
    src = src_file["policy"]
    play = int(np.flatnonzero(fm.act_src >= 0)[-1])
    torch.testing.assert_close(moved["policy"]["policy_head.weight"][play], src["policy_head.weight"][fm.act_src[play]])


@pytest.mark.parametrize("layer", ["sparse", "dense"])
def test_a_move_onto_the_voids_kind_with_zero_rows_plays_as_the_source(layer, tmp_path):
    """``obs_kind="observation_voids"``, ``new_features="zero"``: every ``observation`` feature
    maps, the 16 voids rows are zero, and the moved actor and critic equal the source on every
    position, those where the play has shown voids included; with fresh rows they do not."""
    source = SOURCE if layer == "sparse" else _dense_source(tmp_path)
    out, fresh = tmp_path / "voids.pt", tmp_path / "voids_fresh.pt"
    report = transfer_policy(source, "bazar", out, obs_kind="observation_voids", new_features="zero")
    transfer_policy(source, "bazar", fresh, obs_kind="observation_voids")
    assert (report["obs_kind"], report["source_obs_kind"], report["new_features"]) == (
        "observation_voids", "observation", "zero")
    assert (report["obs_mapped"], report["obs_size"], report["obs_dropped"]) == (1459, 1475, 0)
    assert report["actions_mapped"] == report["num_actions"]
    net_s, enc_s, *_ = load_policy(source, "bazar")
    net_d, enc_d, cfg_d, *_ = load_policy(out, "bazar")
    net_f, *_ = load_policy(fresh, "bazar")
    assert cfg_d.obs_kind == enc_d.kind == "observation_voids"
    voids = next(p for p in enc_d.pieces if p.name == "voids")
    rng, cfg = np.random.default_rng(11), make_rules("bazar")
    with_voids, fresh_differs = 0, 0
    for d in range(4):
        state = deal_random(cfg, rng, d)
        while legal_actions(state):
            view = seat_view(state, state.seat)
            x_d, x_s = enc_d.encode(view), enc_s.encode(view)
            priv = torch.from_numpy(privileged_features(state, state.seat)[None])
            with torch.no_grad():
                ld, ls = net_d.logits(torch.from_numpy(x_d[None])), net_s.logits(torch.from_numpy(x_s[None]))
                vd = net_d.critic_value(torch.from_numpy(x_d[None]), priv)
                vs = net_s.critic_value(torch.from_numpy(x_s[None]), priv)
                lf = net_f.logits(torch.from_numpy(x_d[None]))
            torch.testing.assert_close(ld, ls, rtol=1e-5, atol=1e-4)
            torch.testing.assert_close(vd, vs, rtol=1e-5, atol=1e-4)
            if x_d[voids.offset:voids.offset + voids.size].any():
                with_voids += 1
                fresh_differs += int(not torch.allclose(lf, ls, rtol=1e-5, atol=1e-4))
            state = apply_action(state, int(rng.choice(legal_actions(state))))
    assert with_voids >= 10 and fresh_differs == with_voids


def test_zero_rows_on_a_preset_move_and_the_dropped_count(tmp_path):
    """``new_features="zero"`` between presets: belote's inputs without a bazar feature get zero
    rows in the actor's and the critic's first layers, the mapped rows keep the source's, and
    the report counts the bazar features that belote has no column for."""
    out = tmp_path / "belote_zero.pt"
    report = transfer_policy(SOURCE, "belote", out, new_features="zero")
    es, ed = ObservationEncoder(make_rules("bazar")), ObservationEncoder(make_rules("belote"))
    fm = feature_map(es, ed)
    new_rows = np.flatnonzero(fm.obs_src < 0)
    assert (report["obs_mapped"], report["obs_size"]) == (373, 414) and new_rows.size == 414 - 373
    assert report["obs_dropped"] == es.size - len(set(fm.obs_src[fm.obs_src >= 0].tolist())) > 0
    moved = torch.load(out, map_location="cpu", weights_only=True)["policy"]
    src = torch.load(SOURCE, map_location="cpu", weights_only=True)["policy"]
    for k in ("actor_trunk.0.weight", "critic_trunk.0.weight"):   # the sparse layer stores [in, out]
        assert moved[k][new_rows].abs().sum() == 0
        j = int(np.flatnonzero(fm.obs_src >= 0)[0])
        torch.testing.assert_close(moved[k][j], src[k][fm.obs_src[j]] * float(fm.obs_scale[j]))


def test_transfer_is_reproducible(moved, tmp_path):
    out, _ = moved
    again = tmp_path / "again.pt"
    transfer_policy(SOURCE, "bazar-app", again)
    a, b = (torch.load(p, map_location="cpu", weights_only=True)["policy"] for p in (out, again))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_bad_inputs_raise_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match="4-player 'bazar' and 2-player 'duel'"):
        transfer_policy(SOURCE, "duel", tmp_path / "x.pt")
    with pytest.raises(ConfigError, match="already a 'bazar' policy reading the 'observation' observation kind"):
        transfer_policy(SOURCE, "bazar", tmp_path / "x.pt")
    with pytest.raises(ConfigError, match="already a 'bazar' policy"):
        transfer_policy(SOURCE, "bazar", tmp_path / "x.pt", obs_kind="observation")
    with pytest.raises(ConfigError, match="unknown observation kind 'voids'"):
        transfer_policy(SOURCE, "bazar", tmp_path / "x.pt", obs_kind="voids")
    with pytest.raises(ConfigError, match="new_features must be 'fresh' or 'zero', got 'zeros'"):
        transfer_policy(SOURCE, "bazar-app", tmp_path / "x.pt", new_features="zeros")
    with pytest.raises(FileNotFoundError, match="no policy file"):
        transfer_policy(tmp_path / "missing.pt", "bazar-app", tmp_path / "x.pt")
    with pytest.raises(ConfigError, match="is a directory"):
        transfer_policy(SOURCE, "bazar-app", tmp_path)
    data = torch.load(SOURCE, map_location="cpu", weights_only=True)
    del data["obs_dim"]
    torch.save(data, tmp_path / "old.pt")
    with pytest.raises(ConfigError, match="do not fit preset 'bazar'"):
        transfer_policy(tmp_path / "old.pt", "bazar-app", tmp_path / "x.pt")
    assert not (tmp_path / "x.pt").exists()


def test_script_reports_and_refuses(tmp_path):
    script = [sys.executable, str(REPO / "scripts" / "transfer_policy.py"), str(SOURCE)]
    ok = subprocess.run([*script, "--preset", "belote", "--out", str(tmp_path / "b.pt")],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    assert "373 of 414 input features and 35 of 71 actions" in ok.stdout
    load_policy(tmp_path / "b.pt", "belote")                     # loads as a belote policy
    voids = subprocess.run([*script, "--preset", "bazar", "--obs-kind", "observation_voids", "--new-features",
                            "zero", "--out", str(tmp_path / "v.pt")], capture_output=True, text=True, check=False)
    assert voids.returncode == 0, voids.stderr
    assert "(bazar, observation_voids): 1459 of 1475 input features" in voids.stdout and "others zero" in voids.stdout
    assert "0 of the source's 1459 input features dropped" in voids.stdout
    assert load_policy(tmp_path / "v.pt")[2].obs_kind == "observation_voids"
    for args, says in ((["--preset", "nope"], "unknown preset 'nope'"), (["--preset", "bazar-app"], "is a directory"),
                       (["--preset", "bazar", "--obs-kind", "nope"], "invalid choice: 'nope'"),
                       (["--preset", "bazar-app", "--new-features", "nope"], "invalid choice: 'nope'")):
        out = tmp_path if args == ["--preset", "bazar-app"] else tmp_path / "n.pt"
        bad = subprocess.run([*script, *args, "--out", str(out)], capture_output=True, text=True, check=False)
        assert bad.returncode == 2 and says in bad.stderr and "Traceback" not in bad.stderr
