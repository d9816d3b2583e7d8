"""Cloning data: the decisions of one agent playing every seat, built in parallel and resumably.

A recipe stage that imitates an agent (``pretrain.data`` of agents/ppo/config.py; the
``rules-medium`` clone of docs/training.md) reads its demonstrations from a file built by
``scripts/clone_data.py`` rather than playing them in the trainer's one process. The deals are
cut into **chunks** of ``chunk_deals`` deals; chunk ``i`` of a file seeded ``S`` is dealt from
``numpy.random.default_rng([S, i])`` and played by :func:`agents.ppo.demos.collect_demonstrations`,
so any set of chunks can be built, or rebuilt, on its own, one chunk per task on the pool of
:mod:`agents.eval.board_pool` (this machine's processes or a Ray cluster).

**File format** (``format`` :data:`FORMAT`): a stream of pickled dicts, one per finished chunk, in
the order they finished, each appended in one write (a run stopped by a kill loses at most the
chunk being written, which :func:`open_clone_data` cuts off). Every record holds:

==================  ================================================================
key                 meaning
==================  ================================================================
``kind``            ``"blot-clone-data"``
``format``          :data:`FORMAT`
``preset``          the preset id
``agent``           the agents.registry name of the agent that played every seat
``seed``            the file's seed ``S``
``obs_kind``        observation kind of ``blot_env.observation`` (``observation``, ...)
``obs_size``        ``D``, the encoder's feature count
``num_actions``     ``A``, the size of the preset's action space
``chunk``           the chunk index ``i``
``deals``           deals in the chunk
``samples``         ``T``, decisions kept (those with more than one legal action)
``cpu_seconds``     worker CPU time of the chunk
``arrays``          name -> ``(dtype, shape, zlib-compressed bytes)``: ``obs uint8[T, D]``
                    (the encoder's numerators), ``masks bool[T, A]``, ``actions int64[T]``,
                    ``returns float32[T]`` (the acting seat's side's deal score minus the
                    other side's, **table points, unscaled**), ``privileged uint8[T, P]``
                    (every hand, for a privileged critic; ``blot_env.observation.privileged_size``),
                    ``deal int32[T]`` (the decision's deal in the chunk, 0..deals-1; files written
                    before it existed lack it, and are read all the same), and in a file built
                    with ``dd_values`` ``qvalues float32[T, A]`` (with ``rollout_values`` the
                    same array of rollout values, below): at each card to play (no
                    declaration step pending) every legal card's exact double-dummy value on
                    the deal's real hands, the acting seat's side's score minus the other's,
                    **table points, unscaled**; NaN for illegal actions and other decisions
                    (:func:`agents.ppo.demos.collect_demonstrations`)
``dd_values``       whether the records hold ``qvalues`` (absent in files written before the
                    key existed: false)
``rollout_values``  whether the records hold ``qvalues`` of another kind: every legal card's
                    rollout value, the side's score difference when the agent's own network
                    plays every seat greedily to the end after that card, on the real hands
                    (:func:`agents.ppo.demos.rollout_rows`; same units; absent: false)
``rollout_worlds``  0: the rollouts ran on the real deal; K: each value is the mean over K deals
                    sampled from the acting seat's view (absent: 0)
==================  ================================================================

A bazar chunk of 100 ``rules-medium`` deals holds about 3,000 decisions and takes about
11 CPU seconds; its record is about 350 kB (docs/training.md, "Cloning data (dataset)"). The
double-dummy values almost double the cost of a deal, the rollout values cost about 1.5 times
the double-dummy ones, and rollout values over 8 worlds about 6.6 times those on the real deal
(docs/training.md, "Cloning data (dataset)").
"""

from __future__ import annotations

import os
import pickle
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from blot_env.errors import ConfigError
from blot_env.rules_config import RulesConfig

KIND = "blot-clone-data"
FORMAT = 1
ARRAYS = ("obs", "masks", "actions", "returns", "privileged", "deal")
HEADER_KEYS = ("preset", "agent", "seed", "obs_kind", "obs_size", "num_actions", "dd_values", "rollout_values",
               "rollout_worlds")
"""The keys every record of one file shares (``dd_values`` and ``rollout_values`` read as false,
``rollout_worlds`` as 0, where absent)."""
_DEFAULTS = {"dd_values": False, "rollout_values": False, "rollout_worlds": 0}


def header_value(rec: dict, key: str) -> Any:
    """A record's value of the :data:`HEADER_KEYS` entry ``key`` (``dd_values`` and
    ``rollout_values`` false, ``rollout_worlds`` 0, where absent)."""
    return rec.get(key, _DEFAULTS.get(key))


class CloneDataError(ConfigError):
    """A cloning-data file that cannot be read, or that does not fit the run asked of it."""


@dataclass(frozen=True)
class CloneJob:
    """What every chunk of a run shares (sent once to each worker of :func:`agents.eval.board_pool.make_pool`)."""

    cfg: RulesConfig
    agent: str
    seed: int
    chunk_deals: int
    obs_kind: str = "observation"
    dd_values: bool = False
    """Also record every legal card's double-dummy value (``qvalues``, module docstring)."""
    rollout_values: bool = False
    """Also record every legal card's rollout value under the agent's own network (``qvalues``,
    module docstring); the agent must be a PPO policy, and not with ``dd_values``."""
    rollout_worlds: int = 0
    """With ``rollout_values``: run the rollouts in this many deals sampled from the acting seat's
    view and record their mean (0: on the real deal)."""
    factory: Any = field(default=None, compare=False)
    """``factory(name, rules, seed) -> agent`` that builds ``agent`` in each worker (the command-line
    edge passes :func:`agents.registry.make_agent`; it travels to the workers by reference)."""

    def __post_init__(self) -> None:
        if self.rollout_worlds < 0 or (self.rollout_worlds and not self.rollout_values):
            raise ConfigError(f"rollout_worlds must be 0, or > 0 with rollout_values; got {self.rollout_worlds!r} "
                              f"with rollout_values={self.rollout_values}")
        if self.dd_values and self.rollout_values:
            raise ConfigError("double-dummy values and rollout values fill the same qvalues: ask for one of them")

    def header(self) -> dict[str, Any]:
        """The :data:`HEADER_KEYS` values of this job's records."""
        from blot_env.actions import layout_for
        from blot_env.observation import ObservationEncoder

        return {"preset": self.cfg.preset, "agent": self.agent, "seed": self.seed, "obs_kind": self.obs_kind,
                "obs_size": ObservationEncoder(self.cfg, self.obs_kind).size,
                "num_actions": layout_for(self.cfg).num_actions, "dd_values": self.dd_values,
                "rollout_values": self.rollout_values, "rollout_worlds": self.rollout_worlds}


def _pack(a: np.ndarray) -> tuple[str, tuple[int, ...], bytes]:
    a = np.ascontiguousarray(a)
    return a.dtype.str, a.shape, zlib.compress(a.tobytes(), 1)


def unpack_arrays(rec: dict) -> dict[str, np.ndarray]:
    """The arrays of one chunk record (see the module docstring for names, shapes and dtypes)."""
    return {k: np.frombuffer(bytearray(zlib.decompress(b)), dtype=np.dtype(dt)).reshape(shape)
            for k, (dt, shape, b) in rec["arrays"].items()}


def build_chunk(job: CloneJob, chunk: int, num_envs: int = 32) -> dict[str, Any]:
    """Play chunk ``chunk`` of ``job`` and return its record (module docstring).

    Raises:
        UnknownAgentError: ``job.agent`` is not an agents.registry name.
    """
    from blot_env.observation import ObservationEncoder

    from .demos import collect_demonstrations

    t0 = time.process_time()
    encoder = ObservationEncoder(job.cfg, job.obs_kind)
    rng = np.random.default_rng([job.seed, chunk])
    data = collect_demonstrations(job.cfg, encoder, job.agent, job.chunk_deals, min(num_envs, job.chunk_deals), rng,
                                  reward_scale=1.0, seed=chunk, agent_factory=job.factory, privileged=True,
                                  dd_values=job.dd_values, rollout_values=job.rollout_values,
                                  rollout_worlds=job.rollout_worlds)
    names = ARRAYS + (("qvalues",) if job.dd_values or job.rollout_values else ())
    rec = {"kind": KIND, "format": FORMAT, **job.header(), "chunk": int(chunk), "deals": int(job.chunk_deals),
           "samples": len(data["actions"]), "arrays": {k: _pack(data[k]) for k in names}}
    rec["cpu_seconds"] = time.process_time() - t0
    return rec


def chunk_task(chunk: int) -> dict[str, Any]:
    """Pool task: the record of chunk ``chunk`` of the worker's :class:`CloneJob`."""
    from ..eval.board_pool import worker_job

    return build_chunk(worker_job(), chunk)


def read_clone_data(path: str | Path) -> tuple[list[dict], int]:
    """The complete chunk records of a file, and the byte offset where they end (a record cut
    short by a kill is not returned).

    Raises:
        CloneDataError: no such file, a record that is no cloning-data record of format
            :data:`FORMAT`, or records that disagree on a :data:`HEADER_KEYS` value.
    """
    p = Path(path)
    if not p.is_file():
        raise CloneDataError(f"{p}: no cloning-data file (build one with scripts/clone_data.py)")
    out: list[dict] = []
    good = 0
    with open(p, "rb") as f:
        while True:
            try:
                rec = pickle.load(f)
            except Exception:  # the end, or a record cut short by a kill (any unpickling error)
                break
            if not isinstance(rec, dict) or rec.get("kind") != KIND:
                raise CloneDataError(f"{p}: record {len(out)} is not a cloning-data record (kind {KIND!r}); "
                                     "is this a file of scripts/clone_data.py?")
            if rec.get("format") != FORMAT:
                raise CloneDataError(f"{p}: record {len(out)} has format {rec.get('format')!r}; this version reads "
                                     f"format {FORMAT}")
            if out:
                diff = [k for k in HEADER_KEYS if header_value(rec, k) != header_value(out[0], k)]
                if diff:
                    raise CloneDataError(f"{p}: record {len(out)} differs from record 0 in {', '.join(diff)}")
            out.append(rec)
            good = f.tell()
    return out, good


def open_clone_data(path: str | Path, job: CloneJob) -> tuple[BinaryIO, set[int]]:
    """Open a cloning-data file for appending chunks of ``job`` (created if missing), after cutting
    off a record cut short by a kill. Returns the file and the chunk indices it already holds.

    Raises:
        CloneDataError: the file holds chunks of another preset, agent, seed, observation kind
            or chunk size (the message names the field), or is no cloning-data file.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    done: set[int] = set()
    if p.exists() and p.stat().st_size > 0:
        recs, good = read_clone_data(p)
        if not recs:
            with open(p, "rb") as f:
                first = f.read(1)
            if first != b"\x80":  # not even a pickle cut short by a kill: never truncate someone's file
                raise CloneDataError(f"{p} exists and is not a cloning-data file: choose another output file")
        if recs:
            want = {**job.header(), "deals": job.chunk_deals}
            for k, v in want.items():
                if header_value(recs[0], k) != v:
                    raise CloneDataError(f"{p} holds chunks with {k}={header_value(recs[0], k)!r}, this run asks "
                                         f"{k}={v!r}: choose another output file")
        if good < p.stat().st_size:
            with open(p, "r+b") as f:
                f.truncate(good)
        done = {int(r["chunk"]) for r in recs}
    return open(p, "ab"), done


def append_chunk(f: BinaryIO, rec: dict) -> None:
    """Append one chunk record in a single write, flushed to disk."""
    f.write(pickle.dumps(rec, protocol=pickle.HIGHEST_PROTOCOL))
    f.flush()
    os.fsync(f.fileno())


def build_clone_data(job: CloneJob, path: str | Path, deals: int, workers: int | None = 1,
                     address: str | None = None, deadline_s: float | None = None,
                     progress: bool = True) -> dict[str, Any]:
    """Play the chunks of ``job`` that the file ``path`` lacks, up to ``deals`` deals (rounded up to
    whole chunks), appending each as it finishes (``scripts/clone_data.py`` and the ``clone_data``
    stage of a recipe, agents/ppo/recipe.py).

    The work runs on :func:`agents.eval.board_pool.build_dataset` (``workers`` processes here, or
    the Ray cluster at ``address``); ``deadline_s`` seconds from now, Ctrl-C or SIGTERM stop it
    keeping every finished chunk, and a later call with the same file plays only the rest.

    Returns:
        ``{"played": chunks played now, "chunks": chunks the file holds now, "wanted": chunks of
        ``deals``, "complete": whether it holds them all, "seconds", "deadline", "interrupted"}``.

    Raises:
        CloneDataError: the file holds another job's chunks, or is no cloning-data file
            (:func:`open_clone_data`).
        ConfigError: ``deals`` < 1.
    """
    from ..eval.board_pool import build_dataset

    if deals < 1:
        raise ConfigError(f"deals must be >= 1, got {deals}")
    f, done = open_clone_data(path, job)
    wanted = -(-deals // job.chunk_deals)
    todo = [i for i in range(wanted) if i not in done]
    t0 = time.perf_counter()
    from tqdm.auto import tqdm

    bar = tqdm(total=len(todo) * job.chunk_deals, desc=f"clone data {job.cfg.preset} {job.agent}", unit="deal",
               mininterval=5, disable=not progress)
    with f:
        try:
            stop = build_dataset(job, todo, f, chunk_task, append_chunk, workers, address,
                                 None if deadline_s is None else t0 + deadline_s,
                                 on_record=lambda rec: bar.update(rec["deals"]))
        finally:
            bar.close()
    have = len(done & set(range(wanted))) + stop.finished
    return {"played": stop.finished, "chunks": len(done) + stop.finished, "wanted": wanted,
            "complete": have >= wanted, "seconds": time.perf_counter() - t0, "deadline": stop.deadline,
            "interrupted": stop.interrupted}


def check_fits(recs: list[dict], path: str | Path, rules: RulesConfig, encoder: Any, num_actions: int,
               agent: str = "") -> None:
    """Raises :class:`CloneDataError` when the chunks of ``path`` were built for another preset,
    observation encoding, action space or (when ``agent`` is given) agent than a run's."""
    if not recs:
        raise CloneDataError(f"{path}: the file holds no finished chunk")
    head = recs[0]
    want = {"preset": rules.preset, "obs_kind": encoder.kind, "obs_size": encoder.size, "num_actions": num_actions}
    if agent:
        want["agent"] = agent
    for k, v in want.items():
        if head.get(k) != v:
            raise CloneDataError(f"{path}: built with {k}={head.get(k)!r}, this run has {k}={v!r}")


def decision_hits(policy: Any, path: str | Path, max_chunks: int | None = None) -> dict[str, Any]:
    """Per recorded decision of the cloning-data file ``path`` (chunks in order): ``hit``
    (``bool[N]``, ``policy``'s greedy action is the recorded one), ``auction`` (``bool[N]``, an
    auction call), ``actions`` (``int64[N]``, the recorded action ids) and ``deal`` (``int64[N]``,
    the decision's deal, ``chunk * deals + deal in the chunk``; ``None`` when a record predates
    the ``deal`` array), ``dd_regret`` (``float32[N]``, in a file with ``qvalues``: the best legal
    card's value minus that of the greedy action, double-dummy or rollout values as the file
    holds, table points, NaN off the card decisions; else ``None``), plus the file's ``header``
    (its first record's :data:`HEADER_KEYS` and the chunk numbers).

    Raises:
        CloneDataError: see :func:`read_clone_data`; no finished chunk; a file of another
            encoding size than the policy's.
    """
    import torch

    from blot_env.actions import layout_for
    from blot_env.rules_config import make_rules

    from .demos import dd_losses
    from .network import action_groups

    if getattr(policy, "oracle", False):
        raise CloneDataError(f"{path}: the policy is an oracle (network.oracle): it reads every seat's hidden "
                             "cards, which the cloning data do not hold")
    recs, _ = read_clone_data(path)
    recs = sorted(recs, key=lambda r: int(r["chunk"]))[:max_chunks]
    if not recs:
        raise CloneDataError(f"{path}: the file holds no finished chunk")
    if recs[0]["obs_size"] != policy.obs_dim:
        raise CloneDataError(f"{path}: observations of size {recs[0]['obs_size']} ({recs[0]['obs_kind']}), the "
                             f"policy reads {policy.obs_dim}")
    device = next(policy.parameters()).device
    auction_stop = action_groups(layout_for(make_rules(recs[0]["preset"])))[0][1]
    hit, auction, actions, deal, regret = [], [], [], [], []
    for r in recs:
        a = unpack_arrays(r)
        with torch.no_grad():
            act, _, _ = policy.act(torch.from_numpy(a["obs"]).to(device), torch.from_numpy(a["masks"]).to(device),
                                   greedy=True, with_value=False)
        act = act.cpu().numpy()
        hit.append(act == a["actions"])
        if "qvalues" in a:
            regret.append(dd_losses(torch.from_numpy(a["qvalues"]), torch.from_numpy(a["masks"]),
                                    torch.from_numpy(act)).numpy())
        auction.append(a["actions"] < auction_stop)
        actions.append(np.asarray(a["actions"], dtype=np.int64))
        deal.append(int(r["chunk"]) * int(r["deals"]) + a["deal"].astype(np.int64) if "deal" in a else None)
    header = {k: header_value(recs[0], k) for k in HEADER_KEYS}
    header["chunks"] = [int(r["chunk"]) for r in recs]
    return {"hit": np.concatenate(hit), "auction": np.concatenate(auction), "actions": np.concatenate(actions),
            "deal": None if any(d is None for d in deal) else np.concatenate(deal), "header": header,
            "dd_regret": np.concatenate(regret) if len(regret) == len(recs) else None}


def _groups(auction: np.ndarray) -> dict[str, np.ndarray]:
    return {"all": np.ones_like(auction), "auction": auction, "play": ~auction}


def agreement(policy: Any, path: str | Path, max_chunks: int | None = None) -> dict[str, float]:
    """How often ``policy`` (an :class:`agents.ppo.network.ActorCritic` trained on the file's
    encoding) takes, greedily, the action recorded in the cloning-data file ``path``: the fraction
    over all decisions (``all``), over auction calls (``auction``) and over the rest
    (``play``: declarations and cards), with the decision counts (``n_all``, ...). A held-out
    file (another ``--seed``) measures a clone on decisions it never trained on. In a file with
    ``qvalues`` (``dd_values`` or ``rollout_values``) also ``dd_regret``, the mean loss of the
    greedy card against the best legal card by those values (table points), ``dd_suboptimal``,
    how often it is above zero, and ``n_cards``, the card decisions that have values.

    Raises:
        CloneDataError: see :func:`decision_hits`.

    Check the observation kind too (``agent.encoder.kind`` against the records' ``obs_kind``):
    two kinds may share a size; ``scripts/clone_data.py --agree`` does.
    """
    d = decision_hits(policy, path, max_chunks)
    rates: dict[str, float] = {}
    counts: dict[str, float] = {}
    for k, sel in _groups(d["auction"]).items():
        n = int(sel.sum())
        rates[k] = float(d["hit"][sel].mean()) if n else float("nan")
        counts[f"n_{k}"] = float(n)
    if d["dd_regret"] is not None:
        r = d["dd_regret"][~np.isnan(d["dd_regret"])]
        rates["dd_regret"] = float(r.mean()) if len(r) else float("nan")
        rates["dd_suboptimal"] = float((r > 0).mean()) if len(r) else float("nan")
        counts["n_cards"] = float(len(r))
    return {**rates, **counts}


def paired_agreement(policy_a: Any, path_a: str | Path, policy_b: Any, path_b: str | Path) -> dict[str, dict]:
    """Two policies on the same recorded decisions, each file encoded for its policy (two
    observation kinds of the same deals: same preset, agent, seed and chunks). Per group
    (``all``, ``auction``, ``play``): ``n`` decisions, the rates ``a`` and ``b``, the decisions
    only A matches (``a_only``) and only B (``b_only``), ``p`` the two-sided exact McNemar test
    (:func:`agents.eval.stats.mcnemar_exact`; it treats decisions as independent), and, since the
    decisions of one deal are not, ``deals`` (the deals holding them), ``diff`` (``b - a``), its
    deal-clustered standard error ``se`` and p-value ``p_deals``
    (:func:`agents.eval.stats.clustered_rate_difference`; NaN when the files predate the ``deal``
    array).

    Raises:
        CloneDataError: as :func:`decision_hits`; the files do not hold the same decisions (the
            differing header field is named, or the recorded actions differ).
    """
    from ..eval.stats import clustered_rate_difference, mcnemar_exact

    da, db = decision_hits(policy_a, path_a), decision_hits(policy_b, path_b)
    for k in ("preset", "agent", "seed", "chunks"):
        if da["header"][k] != db["header"][k]:
            raise CloneDataError(f"{path_a} and {path_b} hold different decisions: {k} {da['header'][k]!r} "
                                 f"against {db['header'][k]!r}")
    if not np.array_equal(da["actions"], db["actions"]):
        raise CloneDataError(f"{path_a} and {path_b} hold different decisions: the recorded actions differ")
    out = {}
    for k, sel in _groups(da["auction"]).items():
        ha, hb = da["hit"][sel], db["hit"][sel]
        a_only, b_only = int((ha & ~hb).sum()), int((hb & ~ha).sum())
        row = {"n": int(sel.sum()), "a": float(ha.mean()) if sel.any() else float("nan"),
               "b": float(hb.mean()) if sel.any() else float("nan"), "a_only": a_only, "b_only": b_only,
               "p": mcnemar_exact(a_only, b_only)}
        row["diff"], row["se"], row["p_deals"], row["deals"] = row["b"] - row["a"], float("nan"), float("nan"), 0
        if da["deal"] is not None:
            deals, inverse = np.unique(da["deal"][sel], return_inverse=True)
            row["deals"] = len(deals)
            if len(deals) >= 2:
                diff = np.bincount(inverse, weights=hb.astype(float) - ha.astype(float), minlength=len(deals))
                size = np.bincount(inverse, minlength=len(deals)).astype(float)
                row["diff"], row["se"], row["p_deals"] = clustered_rate_difference(diff, size)
        out[k] = row
    return out


__all__ = [
    "ARRAYS",
    "FORMAT",
    "HEADER_KEYS",
    "KIND",
    "CloneDataError",
    "CloneJob",
    "agreement",
    "append_chunk",
    "build_chunk",
    "build_clone_data",
    "check_fits",
    "chunk_task",
    "decision_hits",
    "header_value",
    "open_clone_data",
    "paired_agreement",
    "read_clone_data",
    "unpack_arrays",
]
