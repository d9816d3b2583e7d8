"""Rollout card values in cloning data (``scripts/clone_data.py --rollout-values``,
:func:`agents.ppo.demos.rollout_rows`): each legal card's value when the network plays the
rest of the deal in every seat."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from conftest import load_script  # noqa: E402

from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.clone_data import CloneDataError, CloneJob, agreement, open_clone_data, read_clone_data, unpack_arrays  # noqa: E402
from agents.ppo.config import load_config  # noqa: E402
from agents.ppo.demos import rollout_rows, world_rollout_rows  # noqa: E402
from agents.ppo.network import action_groups  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.search.sampler import sample_worlds  # noqa: E402
from blot_env.actions import layout_for  # noqa: E402
from blot_env.engine import apply_action, current_seat, deal_random, deal_result, is_terminal, legal_actions  # noqa: E402
from blot_env.errors import ConfigError  # noqa: E402
from blot_env.rules_config import make_rules  # noqa: E402
from blot_env.scoring import side_score_difference  # noqa: E402
from blot_env.state import Phase  # noqa: E402
from blot_env.view import seat_view  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
#: the trained bazar policy these tests start from, the one their margins were measured with: the
#: stage-10 policy (shipped when they were written; docs/experiments.md), kept as test data
START = str(REPO / "tests" / "data" / "ppo_bazar_stage10.pt")


@pytest.fixture(scope="module")
def rollout_file(tmp_path_factory) -> Path:
    """Six bazar deals of the start policy in every seat, with rollout values."""
    path = tmp_path_factory.mktemp("ro") / "ro.pkl"
    assert load_script("clone_data").main(["--agent", START, "--deals", "6", "--chunk-deals", "3", "--workers", "1",
                                           "--rollout-values", "--out", str(path)]) == 0
    return path


def _arrays(path: Path) -> dict[str, np.ndarray]:
    recs = sorted(read_clone_data(path)[0], key=lambda r: r["chunk"])
    parts = [unpack_arrays(r) for r in recs]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def test_rollout_values_sit_on_the_legal_cards_and_the_played_card_gets_the_deals_outcome(rollout_file):
    """Every card decision has a value on exactly its legal cards; auction calls and declaration
    steps have none; the values are whole table points; and since the network in every seat
    plays the rest of the deal greedily both in the file and in the rollouts, the played card's
    value is the deal's outcome for the acting side."""
    head = read_clone_data(rollout_file)[0][0]
    assert head["rollout_values"] is True and head["dd_values"] is False
    a = _arrays(rollout_file)
    q, masks, acts = a["qvalues"], a["masks"], a["actions"]
    lay = layout_for(make_rules("bazar"))
    play = lay.blocks["PLAY"]
    ids = np.arange(masks.shape[1])
    cards = (masks & (ids >= play.start) & (ids < play.start + 32)).any(1)
    auction = acts < action_groups(lay)[0][1]
    assert cards.sum() > 100 and auction.sum() > 30 and (~cards & ~auction).sum() > 0
    assert np.isnan(q[~cards]).all()
    assert np.array_equal(~np.isnan(q[cards]), masks[cards])
    vals = q[cards][masks[cards]]
    assert (vals == np.round(vals)).all()
    played = q[cards, acts[cards]]
    # the file's agents act on one view at a time and the rollouts on batches: a last-bit difference between
    # the two forward passes could flip a near-tie, so allow 1% (none seen here)
    assert np.mean(played == a["returns"][cards]) >= 0.99, np.flatnonzero(played != a["returns"][cards])
    spread = np.nanmax(q[cards], 1) - np.nanmin(q[cards], 1)
    assert (spread > 0).mean() > 0.2  # the card chosen changes the outcome on many decisions


def test_rollout_rows_match_a_seat_by_seat_playout():
    """:func:`rollout_rows` against the plain loop: after each legal card, four PPO agents (one
    per seat, each acting greedily on its own view) play the deal out one action at a time."""
    rules = make_rules("bazar")
    agent = make_agent(START, rules)
    rng = np.random.default_rng(7)
    states = []
    while len(states) < 6:  # card decisions from deals the network plays, at tricks 0 to 7
        st = deal_random(rules, rng, int(rng.integers(4)))
        while not is_terminal(st):
            if st.phase == Phase.PLAY and not st.pending and len(legal_actions(st)) > 1 and rng.random() < 0.15:
                states.append(st)
            st = apply_action(st, agent.act(seat_view(st, current_seat(st)), rng))
    rows = rollout_rows(states, agent.policy, agent.encoder, layout_for(rules).num_actions, batch=5)
    checked = 0
    for i, st in enumerate(states):
        mover = current_seat(st)
        assert np.array_equal(~np.isnan(rows[i]), np.isin(np.arange(rows.shape[1]), legal_actions(st)))
        for a in legal_actions(st):
            s = apply_action(st, a)
            while not is_terminal(s):
                s = apply_action(s, agent.act(seat_view(s, current_seat(s)), rng))
            assert rows[i, a] == side_score_difference(deal_result(s).score, mover), (i, a)
            checked += 1
    assert checked >= 12


def test_world_values_depend_on_the_view_only():
    """``--rollout-worlds``: the mean over deals sampled from the acting seat's view is the same
    for the real deal and for another deal that seat cannot tell from it, while the values on
    the real deal alone differ between the two (the hidden cards change the outcome)."""
    rules = make_rules("bazar")
    agent = make_agent(START, rules)
    num_actions = layout_for(rules).num_actions
    rng = np.random.default_rng(3)
    checked = differ = 0
    for _ in range(30):
        if checked >= 3 and differ >= 1:
            break
        st = deal_random(rules, rng, int(rng.integers(4)))
        while not is_terminal(st) and not (st.phase == Phase.PLAY and not st.pending and st.trick_no == 3
                                           and len(legal_actions(st)) > 1):
            st = apply_action(st, agent.act(seat_view(st, current_seat(st)), rng))
        if is_terminal(st):
            continue
        view = seat_view(st, current_seat(st))
        other = next(w.state for w in sample_worlds(view, 8, rng) if w.state.hands != st.hands)
        assert seat_view(other, current_seat(other)) == view
        real = rollout_rows([st, other], agent.policy, agent.encoder, num_actions)
        mean = [world_rollout_rows([x], agent.policy, agent.encoder, num_actions, 6, np.random.default_rng(9))[0]
                for x in (st, other)]
        assert np.array_equal(mean[0], mean[1], equal_nan=True)
        assert np.array_equal(~np.isnan(mean[0]), ~np.isnan(real[0]))
        worlds = [w.state for w in sample_worlds(view, 6, np.random.default_rng(9))]
        per_world = rollout_rows(worlds, agent.policy, agent.encoder, num_actions)
        legal = ~np.isnan(real[0])
        assert len(worlds) == 6 and np.allclose(mean[0][legal], per_world[:, legal].mean(0))
        checked += 1
        differ += not np.array_equal(real[0], real[1], equal_nan=True)
    assert checked >= 3 and differ >= 1, (checked, differ)


def test_training_reads_a_rollout_file(rollout_file, tmp_path):
    """``pretrain.q_temperature`` learns from rollout values as from double-dummy ones: the greedy
    card's loss against the file's values falls on the file's own deals."""
    cfg = load_config(REPO / "configs" / "dd_bazar.yaml", [
        f"init_policy={START}", f"pretrain.agent={START}", f"pretrain.data={rollout_file}",
        "pretrain.chunk_deals=6", "pretrain.passes=4",
        "pretrain.batch_size=64", "pretrain.learning_rate=1e-3", "pretrain.q_temperature=0.5", "torch_threads=1"])
    trainer = build_trainer(cfg, tmp_path / "ro")
    before = agreement(make_agent(START, make_rules("bazar")).policy, rollout_file)["dd_regret"]
    trainer.train()
    after = agreement(make_agent(str(tmp_path / "ro" / "policy.pt"), make_rules("bazar")).policy,
                      rollout_file)["dd_regret"]
    assert before > 0 and after < 0.8 * before, (before, after)


def test_rollout_values_need_a_policy_and_exclude_dd_values(tmp_path, capsys):
    script = load_script("clone_data")
    out = str(tmp_path / "x.pkl")
    assert script.main(["--agent", "rules", "--deals", "2", "--chunk-deals", "2", "--workers", "1",
                        "--rollout-values", "--out", out]) == 2
    assert "rollout values play the agent's own network in every seat: 'rules' has none" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.main(["--agent", "ppo", "--deals", "2", "--workers", "1", "--rollout-values", "--dd-values",
                     "--out", out])
    assert "--dd-values and --rollout-values fill the same qvalues" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        script.main(["--agent", "ppo", "--deals", "2", "--workers", "1", "--rollout-worlds", "4", "--out", out])
    assert "--rollout-worlds needs --rollout-values" in capsys.readouterr().err


def test_a_worlds_file_says_so_and_holds_values_on_the_legal_cards(tmp_path, capsys):
    path = tmp_path / "w.pkl"
    script = load_script("clone_data")
    assert script.main(["--agent", "ppo", "--deals", "2", "--chunk-deals", "2", "--workers", "1",
                        "--rollout-values", "--rollout-worlds", "3", "--out", str(path)]) == 0
    assert read_clone_data(path)[0][0]["rollout_worlds"] == 3
    capsys.readouterr()
    assert script.main(["--info", str(path)]) == 0
    assert "rollout card values over 3 sampled worlds" in capsys.readouterr().out
    a = _arrays(path)
    cards = ~np.isnan(a["qvalues"]).all(1)
    assert cards.sum() > 20
    assert np.array_equal(~np.isnan(a["qvalues"][cards]), a["masks"][cards])
    with pytest.raises(CloneDataError, match=r"holds chunks with rollout_worlds=3, this run asks rollout_worlds=0"):
        open_clone_data(path, CloneJob(make_rules("bazar"), "ppo", 0, 2, rollout_values=True))
    with pytest.raises(ConfigError, match=r"rollout_worlds must be 0, or > 0 with rollout_values"):
        CloneJob(make_rules("bazar"), "ppo", 0, 2, rollout_worlds=3)
