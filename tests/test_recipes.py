"""Config inheritance (agents/ppo/config.py), recipes (agents/ppo/recipe.py, configs/recipes/)
and the model cards of the shipped policies (agents/data/ppo_<preset>.json).

The six recipes run at ``--tiny`` scale from nothing (bazar-app and belote on the tiny bazar
run, ``--use bazar=...``); each run's card is checked field by field, a rerun of a finished
recipe does nothing, and a run stopped inside a training stage continues to the same weights
as a straight run. Every shipped card's small check row is replayed with the evaluation of
``blot-eval`` and must equal the card's figures exactly (duplicate evaluation is deterministic).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

torch = pytest.importorskip("torch", reason="PPO needs the train extra: pip install -e '.[train]'")

from agents.eval.board_pool import weights_digest  # noqa: E402
from agents.ppo.agent import model_card  # noqa: E402
from agents.ppo.cli import main as blot_train  # noqa: E402
from agents.ppo.config import TrainConfig, load_config, read_config_file  # noqa: E402
from agents.ppo.recipe import (  # noqa: E402
    RECIPES_DIR,
    STATE_NAME,
    RecipeError,
    load_recipe,
    measure_row,
    run_recipe,
)
from agents.registry import make_agent  # noqa: E402
from blot_env.errors import ConfigError  # noqa: E402
from blot_env.rules_config import PRESETS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"
ORDER = ("bazar", "duel", "duel-app", "open", "bazar-app", "belote")  # bazar first: the last two reuse it


# --------------------------------------------------------------------------- config inheritance


def _write(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_config_inherits_its_bases_deeply_with_lists_and_nulls_replacing_whole(tmp_path):
    _write(tmp_path / "a.yaml", {"preset": "duel", "seed": 1, "network": {"hidden": [64, 64], "activation": "tanh"},
                                 "pool": {"baselines": ["random", "rules"], "opponent_prob": 0.4},
                                 "pretrain": {"agent": "rules", "deals": 100}})
    _write(tmp_path / "b.yaml", {"base": "a.yaml", "network": {"hidden": [32]}, "pool": {"baselines": ["rules"]},
                                 "pretrain": None})
    _write(tmp_path / "d.yaml", {"seed": 5, "ppo": {"learning_rate": 1e-3}})
    c = _write(tmp_path / "sub" / "c.yaml", {"base": ["../b.yaml", "../d.yaml"], "ppo": {"ent_coef": 0.02}})
    cfg = load_config(c)
    assert cfg.preset == "duel" and cfg.seed == 5                      # from a, then d (the later base wins)
    assert cfg.network.hidden == (32,) and cfg.network.activation == "tanh"   # lists replaced, mappings merged
    assert cfg.pool.baselines == ("rules",) and cfg.pool.opponent_prob == 0.4
    assert cfg.pretrain == TrainConfig().pretrain                      # null: the section's defaults
    assert (cfg.ppo.learning_rate, cfg.ppo.ent_coef) == (1e-3, 0.02)
    assert "base" not in read_config_file(c)
    # the file's own keys win over every base, and --set still reaches a section reset by null
    assert load_config(tmp_path / "b.yaml", ["pretrain.deals=7"]).pretrain.deals == 7
    _write(tmp_path / "e.yaml", {"base": "b.yaml", "seed": 9, "network": {"activation": "relu"}})
    e = load_config(tmp_path / "e.yaml")
    assert (e.seed, e.network.activation, e.network.hidden) == (9, "relu", (32,))


def test_a_cycle_a_missing_base_and_a_bad_base_name_the_files(tmp_path):
    _write(tmp_path / "x.yaml", {"base": "y.yaml", "seed": 1})
    _write(tmp_path / "y.yaml", {"base": "x.yaml"})
    with pytest.raises(ConfigError, match="cycle") as ei:
        load_config(tmp_path / "x.yaml")
    assert "x.yaml" in str(ei.value) and "y.yaml" in str(ei.value)
    _write(tmp_path / "self.yaml", {"base": "self.yaml"})
    with pytest.raises(ConfigError, match="cycle"):
        load_config(tmp_path / "self.yaml")
    _write(tmp_path / "m.yaml", {"base": "nope.yaml"})
    with pytest.raises(ConfigError, match=r"m\.yaml: base 'nope\.yaml' not found"):
        load_config(tmp_path / "m.yaml")
    for bad in (3, [], [None], ""):
        _write(tmp_path / "b.yaml", {"base": bad})
        with pytest.raises(ConfigError, match="base must be a config file name"):
            load_config(tmp_path / "b.yaml")
    _write(tmp_path / "k.yaml", {"base": "x.yaml", "network": {"widht": 3}})
    with pytest.raises(ConfigError, match="cycle"):  # the chain is read before the keys are checked
        load_config(tmp_path / "k.yaml")


def test_every_config_and_recipe_loads():
    configs = [p for p in sorted(CONFIGS.glob("*.yaml")) if not p.name.startswith("rllib_")]
    assert {p.stem for p in configs} >= {f"ppo_{p}" for p in PRESETS} | {"ppo_tiny", "clone_bazar_rules-medium"}
    for path in configs:
        cfg = load_config(path)
        assert "base" not in read_config_file(path) and cfg.to_dict().keys() == TrainConfig().to_dict().keys()
    recipes = sorted(RECIPES_DIR.glob("*.yaml"))
    assert {p.stem for p in recipes} == set(PRESETS)
    for path in recipes:
        rec = load_recipe(path.stem)
        assert rec.name == rec.preset == path.stem
        assert rec.digest == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(("stages", "message"), [
    ([{"name": "s", "select": {"run": "t"}}, {"name": "t", "train": "../c.yaml"}], "select.run must name an earlier"),
    ([{"name": "t", "train": "../c.yaml", "set": {"init_policy": "{later}/policy.pt"}},
      {"name": "later", "train": "../c.yaml"}], r"\{later\} names no earlier stage"),
    ([{"name": "t", "train": "../missing.yaml"}], "no config file"),
    ([{"name": "t", "train": "../c.yaml", "fly": 1}], r"unknown key\(s\) \['fly'\]"),
    ([{"name": "t", "train": "../c.yaml", "select": {"run": "t"}}], "exactly one of"),
    ([{"name": "t", "train": "../c.yaml"}, {"name": "t", "train": "../c.yaml"}], "two stages share this name"),
    ([{"name": "d", "clone_data": {"agent": "rules", "deals": 0}}], "clone_data.deals must be a positive integer"),
    ([{"name": "t", "train": "../c.yaml", "max_updates": 0}], "max_updates must be a positive integer"),
    ([{"name": "d", "clone_data": {"agent": "rules", "deals": 4}}], "must leave a policy"),
])
def test_a_bad_recipe_is_refused_naming_the_stage(tmp_path, stages, message):
    _write(tmp_path / "c.yaml", {"preset": "duel"})
    path = _write(tmp_path / "r" / "bad.yaml", {"recipe": "bad", "preset": "duel", "stages": stages,
                                                 "card": {"boards": 2, "check": {"opponent": "rules", "boards": 1,
                                                                                  "seed": 0}}})
    with pytest.raises(RecipeError, match=message):
        load_recipe(path)


# --------------------------------------------------------------------------- the six recipes, tiny


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("recipes")
    for name in ORDER:
        use = ["--use", f"bazar={root / 'bazar'}"] if name in ("bazar-app", "belote") else []
        assert blot_train(["--recipe", name, "--tiny", "--out", str(root / name), "--workers", "1",
                           "--no-progress", *use]) == 0
    return root


@pytest.mark.parametrize("name", ORDER)
def test_a_tiny_recipe_writes_its_policy_and_card(tiny_runs, name):
    rec = load_recipe(name)
    out = tiny_runs / name
    policy = out / f"ppo_{name}.pt"
    card = model_card(policy)
    assert card == json.loads((out / f"ppo_{name}.json").read_text(encoding="utf-8"))
    assert (card["preset"], card["policy"], card["source"]) == (name, policy.name, "recipe run (--tiny)")
    assert card["recipe"] == {"name": name, "file": f"configs/recipes/{name}.yaml", "sha256": rec.digest}
    assert len(card["git"]["commit"] or "0" * 40) == 40
    agent = make_agent(str(policy), name)
    assert card["weights_digest"] == weights_digest(agent)
    last = rec.stages[-1].name
    assert policy.read_bytes() == (out / last / "policy.pt").read_bytes()
    # every stage in order (a nested recipe's stages under its name), steps from the trainers
    names = [s["stage"] for s in card["stages"]]
    want = []
    for s in rec.stages:
        if s.kind == "recipe":
            sub = load_recipe(s.spec["name"])
            upto = [t.name for t in sub.stages]
            want += [f"{s.name}/{t}" for t in upto[:upto.index(s.spec["until"]) + 1]]
        else:
            want.append(s.name)
    assert names == want
    steps = card["learner_steps"]
    assert steps["total"] == sum(steps["per_stage"].values()) > 0
    trained = [s for s in card["stages"] if s["kind"] in ("train", "resume")]
    assert [s["stage"] for s in trained] == list(steps["per_stage"])
    for s in trained:
        assert s["added_steps"] == steps["per_stage"][s["stage"]]
        assert (s["added_steps"] == 0) == s["stage"].endswith("clone")  # the clone only clones
    assert card["wall_time_s"] > 0 and card["machine"]["cpus"] >= 1
    # the rows: the recipe's opponents on the tiny card's 4 test boards; search rows listed as skipped
    c = rec.card
    assert [(r["opponent"], r["mode"]) for r in card["test_rows"]] == (
        [(o, "plain") for o in c["opponents"]] + [(o, "mixed") for o in c["mixed"]])
    for r in card["test_rows"] + [card["check_row"]]:
        assert r["boards"] == 4 and r["split"] == "test" and r["ci95"][0] <= r["mean"] <= r["ci95"][1]
        assert r["command"].startswith(f"blot-eval --agent {policy} --vs {r['opponent']} --preset {name} --boards 4")
    assert [r["opponent"] for r in card["skipped_rows"]] == c["search"]
    # a training stage's config.yaml is the resolved config, every key written out
    for s in rec.stages:
        if s.kind == "train":
            written = yaml.safe_load((out / s.name / "config.yaml").read_text(encoding="utf-8"))
            assert written.keys() == TrainConfig().to_dict().keys()
            assert all(written[k].keys() == v.keys() for k, v in TrainConfig().to_dict().items() if isinstance(v, dict))


def test_the_check_row_of_a_tiny_card_replays_exactly(tiny_runs):
    card = model_card(tiny_runs / "open" / "ppo_open.pt")
    chk = card["check_row"]
    again = measure_row(tiny_runs / "open" / "ppo_open.pt", "open", chk["opponent"], chk["boards"], chk["seed"])
    keys = ("mean", "ci95", "board_win_rate", "match_win_rate", "matches")
    assert {k: again[k] for k in keys} == {k: chk[k] for k in keys}


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size) for p in root.rglob("*") if p.is_file()}


def test_a_finished_recipe_run_again_does_nothing(tiny_runs, capsys):
    out = tiny_runs / "duel"
    before = _tree(out)
    assert blot_train(["--recipe", "duel", "--tiny", "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    said = capsys.readouterr().out
    stages = len(load_recipe("duel").stages)
    assert stages > 2 and said.count("done before, skipped") == stages and "card: done before" in said
    assert _tree(out) == before


def test_a_run_stopped_inside_a_stage_continues_to_the_same_weights(tiny_runs, tmp_path, capsys):
    out = tmp_path / "duel-app"
    args = ["--recipe", "duel-app", "--tiny", "--out", str(out), "--workers", "1", "--no-progress"]
    assert blot_train([*args, "--max-updates", "1"]) == 0
    state = json.loads((out / STATE_NAME).read_text(encoding="utf-8"))
    assert state["stages"]["stage1"]["status"] == "running" and "select" not in state["stages"]
    assert (out / "stage1" / "checkpoint.pt").exists() and not (out / "ppo_duel-app.pt").exists()
    assert "stopped (rerun the same command to continue)" in capsys.readouterr().out
    assert blot_train(args) == 0
    assert "stage1 (train ppo_duel-app.yaml): continuing" in capsys.readouterr().out
    straight, resumed = model_card(tiny_runs / "duel-app" / "ppo_duel-app.pt"), model_card(out / "ppo_duel-app.pt")
    assert resumed["weights_digest"] == straight["weights_digest"]
    assert resumed["learner_steps"] == straight["learner_steps"] and resumed["check_row"]["mean"] == \
        straight["check_row"]["mean"]


def test_a_folder_of_another_run_is_refused(tiny_runs, capsys):
    with pytest.raises(RecipeError, match="another recipe"):
        run_recipe("open", tiny_runs / "duel", tiny=True, workers=1, progress=False, say=lambda s: None)
    with pytest.raises(RecipeError, match="another --tiny setting"):
        run_recipe("duel", tiny_runs / "duel", tiny=False, workers=1, progress=False, say=lambda s: None)
    assert blot_train(["--recipe", "nope", "--out", str(tiny_runs / "x")]) == 2
    assert "unknown recipe 'nope'; known: bazar, bazar-app, belote, duel, duel-app, open" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        blot_train(["--recipe", "duel", "--config", str(CONFIGS / "ppo_duel.yaml")])
    assert "--config cannot go with it" in capsys.readouterr().err
    with pytest.raises(RecipeError, match="no recipe stage 'nope'"):
        run_recipe("belote", tiny_runs / "y", tiny=True, use={"nope": tiny_runs / "bazar"}, say=lambda s: None)


# --------------------------------------------------------------------------- the shipped cards


@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_shipped_card_describes_the_shipped_policy_and_its_check_row_replays(preset):
    card = model_card(preset)
    assert (card["preset"], card["policy"], card["source"]) == (preset, f"ppo_{preset}.pt", "shipped")
    assert card["weights_digest"] == weights_digest(make_agent("ppo", preset))
    assert card["recipe"]["name"] == preset and (REPO / card["recipe"]["file"]).is_file()
    assert len(card["git"]["commit"]) == 40
    for r in card["test_rows"]:
        assert r["ci95"][0] <= r["mean"] <= r["ci95"][1] and r["boards"] >= 1000
        assert r["command"].startswith("blot-eval --agent ppo") and r["source"]
    chk = card["check_row"]
    again = measure_row("ppo", preset, chk["opponent"], chk["boards"], chk["seed"])
    keys = ("mean", "ci95", "board_win_rate", "match_win_rate", "matches")
    assert {k: again[k] for k in keys} == {k: chk[k] for k in keys}
