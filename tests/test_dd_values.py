"""Double-dummy card values in cloning data (``scripts/clone_data.py --dd-values``) and learning
from them (``pretrain.q_temperature``, agents/ppo/pretrain.py)."""

from __future__ import annotations

import itertools
import pickle
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from conftest import load_script  # noqa: E402

from agents.ppo.build import build_trainer  # noqa: E402
from agents.ppo.clone_data import CloneDataError, agreement, read_clone_data, unpack_arrays  # noqa: E402
from agents.ppo.config import load_config  # noqa: E402
from agents.ppo.distributions import MaskedCategorical  # noqa: E402
from agents.ppo.network import action_groups  # noqa: E402
from agents.ppo.pretrain import dd_gain, dd_target  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from blot_env.actions import layout_for  # noqa: E402
from blot_env.errors import ConfigError  # noqa: E402
from blot_env.observation import ObservationEncoder  # noqa: E402
from blot_env.rules_config import make_rules  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "configs" / "ppo_tiny.yaml"
#: the trained bazar policy these tests start from, the one their margins were measured with: the
#: stage-10 policy (shipped when they were written; docs/experiments.md), kept as test data
START = REPO / "tests" / "data" / "ppo_bazar_stage10.pt"


def _script():
    return load_script("clone_data")


def _arrays(path: Path) -> dict[str, np.ndarray]:
    recs = sorted(read_clone_data(path)[0], key=lambda r: r["chunk"])
    parts = [unpack_arrays(r) for r in recs]
    for r, p in zip(recs, parts):
        p["deal"] = r["chunk"] * r["deals"] + p["deal"].astype(np.int64)
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def test_dd_values_sit_on_the_legal_cards_and_agree_from_one_card_to_the_next(tmp_path):
    """bazar-app (declarations counted automatically, so the solver's values are exact minimax):
    every card decision has a value on exactly its legal cards, no auction call has one, and the
    value of the card played equals the next card decision's best value in the same deal, from
    that seat's side (forced cards between them keep the value)."""
    path = tmp_path / "dd.pkl"
    assert _script().main(["--preset", "bazar-app", "--agent", "rules", "--deals", "6", "--chunk-deals", "3",
                           "--workers", "1", "--dd-values", "--out", str(path)]) == 0
    assert read_clone_data(path)[0][0]["dd_values"] is True
    a = _arrays(path)
    q, masks, acts = a["qvalues"], a["masks"], a["actions"]
    stop = action_groups(layout_for(make_rules("bazar-app")))[0][1]
    cards = acts >= stop
    assert cards.sum() > 50 and (~cards).sum() > 10
    assert np.isnan(q[~cards]).all()
    assert np.array_equal(~np.isnan(q[cards]), masks[cards])
    vals = q[cards][masks[cards]]
    assert (vals == np.round(vals)).all() and np.abs(vals).max() > 5  # whole table points
    chained = 0
    for d in np.unique(a["deal"]):
        idx = np.flatnonzero((a["deal"] == d) & cards)
        for i, j in itertools.pairwise(idx):
            played, best_next = q[i, acts[i]], np.nanmax(q[j])
            ri, rj = a["returns"][i], a["returns"][j]
            if ri == 0:
                continue
            same_side = ri == rj  # returns: the acting side's final score difference
            assert played == (best_next if same_side else -best_next), (d, i, j, played, best_next)
            chained += 1
    assert chained > 30


def test_bazar_declaration_steps_get_no_values(tmp_path):
    """bazar (declarations made by the players): a decision among declaration actions has no
    values, a card decision has them on exactly its legal cards."""
    path = tmp_path / "bazar.pkl"
    assert _script().main(["--agent", "rules", "--deals", "6", "--chunk-deals", "3", "--workers", "1",
                           "--dd-values", "--out", str(path)]) == 0
    a = _arrays(path)
    play = layout_for(make_rules("bazar")).blocks["PLAY"]
    is_play = (np.arange(a["masks"].shape[1]) >= play.start) & (np.arange(a["masks"].shape[1]) < play.start + 32)
    cards = (a["masks"] & is_play).any(1)
    decl = (a["masks"] & ~is_play).any(1) & ~(a["actions"] < action_groups(layout_for(make_rules("bazar")))[0][1])
    assert decl.sum() > 0 and cards.sum() > 50
    assert np.isnan(a["qvalues"][decl]).all()
    assert np.array_equal(~np.isnan(a["qvalues"][cards]), a["masks"][cards])


def test_dd_gain_and_regret():
    masks = torch.tensor([[True, True, False], [True, True, True]])
    nan = float("nan")
    q = torch.tensor([[1.0, 3.0, nan], [nan, nan, nan]])
    start = torch.log(torch.tensor([[0.5, 0.5, 1e-9], [0.2, 0.3, 0.5]]))
    cur = torch.log(torch.tensor([[0.25, 0.75, 1e-9], [0.6, 0.2, 0.2]]))
    # row 0: (0.25 * 1 + 0.75 * 3) - (0.5 * 1 + 0.5 * 3) = 0.5; row 1 has no values: 0; mean 0.25
    assert float(dd_gain(cur, start, masks, q)) == pytest.approx(0.25)
    from agents.ppo.pretrain import dd_regret

    assert dd_regret(torch.tensor([[2.0, 1.0, 9.0], [0.0, 0.0, 0.0]]), masks, q) == pytest.approx(2.0)  # 3 - 1
    assert np.isnan(dd_regret(torch.zeros(2, 3), masks, torch.full((2, 3), nan)))


def test_dd_target_reweights_the_start_by_the_values():
    masks = torch.tensor([[True, True, True, False], [True, True, False, False]])
    logp = torch.log(torch.tensor([[0.5, 0.3, 0.2, 1e-9], [0.9, 0.1, 1e-9, 1e-9]]))
    nan = float("nan")
    q = torch.tensor([[0.0, 2.0, 2.0, nan], [nan, nan, nan, nan]])
    t = dd_target(logp, masks, q, 1.0)
    w = torch.tensor([0.5, 0.3 * np.e ** 2, 0.2 * np.e ** 2])
    assert torch.allclose(t[0, :3], w / w.sum()) and t[0, 3] == 0
    assert torch.allclose(t[1], torch.tensor([0.9, 0.1, 0.0, 0.0]))  # no values: the start's distribution
    assert torch.allclose(dd_target(logp, masks, q, 1e6)[0, :3], torch.tensor([0.5, 0.3, 0.2]), atol=1e-5)
    cold = dd_target(logp, masks, q, 1e-3)[0]
    assert torch.allclose(cold, torch.tensor([0.0, 0.6, 0.4, 0.0]), atol=1e-5)  # the best cards, in the start's ratio


@pytest.fixture(scope="module")
def own_file(tmp_path_factory) -> Path:
    """Eight bazar deals of the start policy (it bids and plays) with double-dummy values."""
    own = tmp_path_factory.mktemp("dd") / "own.pkl"
    assert _script().main(["--agent", str(START), "--deals", "8", "--chunk-deals", "4", "--workers", "1",
                           "--dd-values", "--out", str(own)]) == 0
    return own


def _dd_run(own: Path, out: Path, *extra: str):
    cfg = load_config(REPO / "configs" / "dd_bazar.yaml", [
        f"init_policy={START}", f"pretrain.agent={START}", f"pretrain.data={own}",
        "pretrain.chunk_deals=8", "pretrain.passes=4", "pretrain.batch_size=64", "pretrain.learning_rate=1e-3",
        "torch_threads=1", *extra])
    trainer = build_trainer(cfg, out)
    trainer.train()
    return trainer


@pytest.mark.parametrize("objective", ["expected", "target"])
def test_q_temperature_lowers_the_double_dummy_regret_and_keeps_the_auction(own_file, tmp_path, objective):
    """Learning from the values of the start's own deals: the greedy card's double-dummy regret
    on those deals falls, and the auction calls (no values: pulled toward the start only) move far
    less than the cards."""
    own = own_file
    start = make_agent(str(START), "bazar").policy
    before = agreement(start, own)
    assert before["all"] == 1.0 and before["dd_regret"] > 0 and before["n_cards"] > 100
    trainer = _dd_run(own, tmp_path / "dd", f"pretrain.q_objective={objective}", "pretrain.q_temperature=0.5")
    assert trainer.pretrain_metrics["bc_dd_regret"] < before["dd_regret"]
    after = agreement(make_agent(str(tmp_path / "dd" / "policy.pt"), "bazar").policy, own)
    assert after["dd_regret"] < 0.8 * before["dd_regret"], (before, after)

    a = _arrays(own)
    obs, masks = torch.from_numpy(a["obs"]), torch.from_numpy(a["masks"])
    with torch.no_grad():
        p0 = MaskedCategorical(start.logits(obs), masks).log_probs
        p1 = MaskedCategorical(trainer.policy.logits(obs), masks).log_probs
    kl = torch.where(masks, p0.exp() * (p0 - p1), 0.0).sum(-1)
    cards = torch.from_numpy(~np.isnan(a["qvalues"]).all(1))
    assert float(kl[~cards].mean()) < 0.25 * float(kl[cards].mean()), (kl[~cards].mean(), kl[cards].mean())


def test_q_from_trick_uses_only_the_later_cards(own_file, tmp_path):
    """With values only from trick 4 on, the cards of the first four tricks (no values: pulled
    toward the start only) move far less than the same cards move when they have values (the
    same run with values from trick 0), and less than the later cards; the later cards' expected
    double-dummy regret falls."""
    start = make_agent(str(START), "bazar").policy
    late = _dd_run(own_file, tmp_path / "late", "pretrain.q_from_trick=4", "pretrain.q_temperature=0.5").policy
    every = _dd_run(own_file, tmp_path / "every", "pretrain.q_temperature=0.5").policy  # values from trick 0
    a = _arrays(own_file)
    obs, masks = torch.from_numpy(a["obs"]), torch.from_numpy(a["masks"])
    enc = ObservationEncoder(make_rules("bazar"), "observation")
    tricks = a["obs"][:, enc.o_trick_no:enc.o_trick_no + 9].argmax(-1)
    cards = ~np.isnan(a["qvalues"]).all(1)
    early, later = cards & (tricks < 4), cards & (tricks >= 4)
    assert early.sum() > 30 and later.sum() > 30
    with torch.no_grad():
        p0 = MaskedCategorical(start.logits(obs), masks).log_probs
        p1 = MaskedCategorical(late.logits(obs), masks).log_probs
        p2 = MaskedCategorical(every.logits(obs), masks).log_probs
    kl = torch.where(masks, p0.exp() * (p0 - p1), 0.0).sum(-1).numpy()
    kl_every = torch.where(masks, p0.exp() * (p0 - p2), 0.0).sum(-1).numpy()
    # the early cards' values, not the data around them, move the early cards (the margin with the
    # stage-10 policy as the start: 0.013 against 0.169)
    assert kl[early].mean() < 0.25 * kl_every[early].mean(), (kl[early].mean(), kl_every[early].mean())
    assert kl[early].mean() < kl[later].mean(), (kl[early].mean(), kl[later].mean())

    def regret(policy) -> float:
        """The later cards' expected double-dummy regret under the policy's probabilities (the
        greedy card's can already be 0 on these few deals)."""
        with torch.no_grad():
            prob = MaskedCategorical(policy.logits(obs), masks).log_probs.exp().numpy()[later]
        q = np.where(a["masks"], a["qvalues"], np.nan)[later]
        loss = np.where(a["masks"][later], np.nanmax(q, 1, keepdims=True) - q, 0.0)
        return float(np.mean(np.sum(prob * np.nan_to_num(loss), 1)))

    assert regret(late) < regret(start), (regret(late), regret(start))
    with pytest.raises(ConfigError, match=r"pretrain\.q_from_trick must be >= 0, got -1"):
        load_config(REPO / "configs" / "dd_bazar.yaml", ["pretrain.q_from_trick=-1"])
    with pytest.raises(ConfigError, match=r"pretrain\.q_objective must be 'target' or 'expected', got 'vote'"):
        load_config(REPO / "configs" / "dd_bazar.yaml", ["pretrain.q_objective=vote"])


def test_sgd_leaves_a_network_without_signal_where_adam_moves_it(own_file, tmp_path):
    """With every value masked out (``q_from_trick=8``: no card is played after eight tricks) the
    loss is the KL to the start alone, whose gradient at the start is zero but for rounding. Adam
    scales those rounding-level gradients up to steps of about its learning rate; SGD, whose step
    is proportional to the gradient, leaves the weights where they were."""
    start = make_agent(str(START), "bazar").policy.state_dict()

    def moved(*extra: str) -> float:
        actor = _dd_run(own_file, tmp_path / extra[-1].split("=")[-1], "pretrain.q_from_trick=8",
                        "pretrain.q_temperature=1", *extra).policy.state_dict()
        return max(float((actor[k] - v).abs().max()) for k, v in start.items())

    assert moved("pretrain.optimizer=sgd", "pretrain.learning_rate=0.01") < 1e-5
    assert moved("pretrain.optimizer=adam") > 1e-3
    # with values SGD does move the network, and lowers the double-dummy loss on these deals
    before = agreement(make_agent(str(START), "bazar").policy, own_file)
    sgd = _dd_run(own_file, tmp_path / "sgd_values", "pretrain.q_temperature=0.5", "pretrain.optimizer=sgd",
                  "pretrain.learning_rate=0.05")
    after = agreement(sgd.policy, own_file)
    assert after["dd_regret"] < before["dd_regret"], (before, after)
    with pytest.raises(ConfigError, match=r"pretrain\.optimizer must be 'adam' or 'sgd', got 'rmsprop'"):
        load_config(REPO / "configs" / "dd_bazar.yaml", ["pretrain.optimizer=rmsprop"])


def test_q_temperature_needs_a_start_and_values(tmp_path):
    rules_file = tmp_path / "rules.pkl"
    assert _script().main(["--agent", "rules", "--deals", "2", "--chunk-deals", "2", "--workers", "1",
                           "--out", str(rules_file)]) == 0
    with pytest.raises(ConfigError, match=r"q_temperature > 0 .* needs pretrain\.from_init=true"):
        load_config(TINY, ["total_steps=0", f"pretrain.data={rules_file}", "pretrain.q_temperature=1"])
    with pytest.raises(ConfigError, match=r"pretrain\.q_temperature must be >= 0 and finite, got -1\.0"):
        load_config(TINY, ["total_steps=0", f"pretrain.data={rules_file}", "pretrain.q_temperature=-1"])
    build_trainer(load_config(TINY, ["total_steps=200", "seed=7", "network.critic=privileged"]),
                  tmp_path / "start").train()
    cfg = load_config(TINY, ["total_steps=0", f"pretrain.data={rules_file}", "pretrain.q_temperature=1",
                             f"init_policy={tmp_path / 'start' / 'policy.pt'}", "pretrain.from_init=true",
                             "network.critic=privileged"])
    with pytest.raises(CloneDataError, match=r"no card values \(qvalues\).* --dd-values"):
        build_trainer(cfg, tmp_path / "run")
    # a file without values refuses chunks with them, and the reverse
    from agents.ppo.clone_data import CloneJob, open_clone_data

    with pytest.raises(CloneDataError, match=r"holds chunks with dd_values=False, this run asks dd_values=True"):
        open_clone_data(rules_file, CloneJob(make_rules("bazar"), "rules", 0, 2, dd_values=True))
    dd_file = tmp_path / "dd.pkl"
    assert _script().main(["--agent", "rules", "--deals", "2", "--chunk-deals", "2", "--workers", "1",
                           "--dd-values", "--out", str(dd_file)]) == 0
    with pytest.raises(CloneDataError, match=r"holds chunks with dd_values=True, this run asks dd_values=False"):
        open_clone_data(dd_file, CloneJob(make_rules("bazar"), "rules", 0, 2))
    # a file written before the key existed reads as one without values, and resumes
    recs = read_clone_data(rules_file)[0]
    old = tmp_path / "old.pkl"
    with open(old, "wb") as f:
        for r in recs:
            pickle.dump({k: v for k, v in r.items() if k not in ("dd_values", "rollout_values", "rollout_worlds")}, f)
    f, done = open_clone_data(old, CloneJob(make_rules("bazar"), "rules", 0, 2))
    f.close()
    assert done == {0}
    for bad, msg in ((["pretrain.q_from_trick=2"], r"q_from_trick and pretrain\.q_objective act on"),
                     (["pretrain.q_objective=target"], r"q_from_trick and pretrain\.q_objective act on"),
                     (["pretrain.q_temperature=1", "pretrain.disagreements_only=true", "pretrain.from_init=true",
                       f"init_policy={tmp_path / 'start' / 'policy.pt'}"], r"set only one of them"),
                     (["pretrain.q_temperature=1", "pretrain.from_init=true", "pretrain.data=",
                       "pretrain.agent=rules", f"init_policy={tmp_path / 'start' / 'policy.pt'}"],
                      r"needs pretrain\.from_init=true \(and init_policy\) and pretrain\.data")):
        with pytest.raises(ConfigError, match=msg):
            load_config(TINY, ["total_steps=0", f"pretrain.data={rules_file}", *bad])
