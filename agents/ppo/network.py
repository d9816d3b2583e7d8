"""The actor-critic: egocentric observation in, masked policy and a value out.

Inputs. The actor reads the observation, either as ``float32[B, D]`` values (what
``ObservationEncoder.encode`` and the AEC env give) or as the engine's compact ``uint8[B, D]``
numerators (``BatchedEngine(obs_dtype="uint8")``), which the network turns into values by
multiplying with the encoder's ``quantum`` (every entry is an integer multiple of its quantum,
so this gives the encoder's values to float32 rounding; the trained agent feeds the same
numerators, ``ObservationEncoder.quantize``). The critic reads the same observation and,
with ``NetworkConfig.critic = "privileged"``, also ``uint8[B, P]`` hidden features (every
seat's cards, :func:`blot_env.observation.privileged_features`): a critic that sees all hands
during training only (PerfectDou's "perfect-training, imperfect-execution"). The actor never
reads them; a policy file keeps the critic for the light search (agents/search/net_search.py),
which feeds it the hands of sampled worlds, never the real ones.

Policy head by action groups. A legal mask never mixes auction calls with play-phase actions
(a test checks it on every preset), and on ``bazar`` 638 of the 681 ids are calls. When the
mask is known (training, masked acting), :meth:`ActorCritic.policy_terms` and
:meth:`ActorCritic.act` compute each row's logits over its own group's columns only: the
same numbers as the full head on the legal actions, for a fraction of the work.

Precision. ``NetworkConfig.precision = "bfloat16"`` runs the hidden layers under CPU/GPU
autocast in bfloat16 (float32 weights and optimizer; the heads and the losses stay float32).
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from blot_env.actions import AUCTION_BLOCKS, ActionLayout
from blot_env.observation import privileged_size

from .config import NetworkConfig, TrainConfig
from .distributions import MASK_LOGIT, MaskedCategorical
from .sparse import SparseInput, SparseLinear


def layer_init(layer: nn.Linear, std: float = math.sqrt(2), bias: float = 0.0) -> nn.Linear:
    """Orthogonal weights with gain ``std`` and constant bias (the PPO implementation detail)."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


def _mlp(sizes: list[int], activation: type[nn.Module], sparse_input: bool = False) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        layers += [SparseLinear(a, b) if sparse_input and i == 0 else layer_init(nn.Linear(a, b)),
                   activation(inplace=True) if activation is nn.ReLU else activation()]
    return nn.Sequential(*layers)


def action_groups(layout: ActionLayout) -> tuple[tuple[int, int], ...]:
    """Column ranges ``((start, stop), ...)`` of the action groups: the auction calls, then the
    rest (declarations and card plays). Raises ValueError if the auction blocks are not one
    contiguous prefix of the layout (the grouped head relies on it)."""
    stop = sum(b.size for name, b in layout.blocks.items() if name in AUCTION_BLOCKS)
    for name, b in layout.blocks.items():
        if (name in AUCTION_BLOCKS) != (b.stop <= stop):
            raise ValueError("the auction blocks do not form a contiguous prefix of the action layout")
    groups = [(0, stop), (stop, layout.num_actions)]
    return tuple(g for g in groups if g[1] > g[0])


class ActorCritic(nn.Module):
    """Policy and value network.

    Args:
        obs_dim: D, the observation encoder's ``size``.
        num_actions: A, the action layout's ``num_actions``.
        cfg: widths, nonlinearity, trunk sharing, critic inputs, precision.
        policy_bias: ``float32[A]`` initial bias of the policy head (see :func:`block_uniform_bias`).
        obs_quantum: ``float32[D]``, the encoder's ``quantum``: lets :meth:`forward` take the
            engine's ``uint8`` numerators (None: only float inputs).
        groups: column ranges of the action groups (:func:`action_groups`); None: one group.
        privileged_dim: P, the size of the extra hidden features (used by the critic when
            ``cfg.critic == "privileged"``, by the actor too when ``cfg.oracle``).

    ``forward(obs [B, D], privileged=None) -> (logits float32[B, A], value float32[B])``; ``obs``
    is ``float32`` values or ``uint8`` numerators, ``privileged`` ``uint8[B, P]`` (required by a
    privileged critic, and by every actor pass of an oracle, ``cfg.oracle``: its actor's input is
    the observation followed by the P hidden features, D + P entries). The value is in reward
    units (scaled score-sheet points, see ``RolloutConfig.reward_scale``).

    Raises:
        ValueError: ``cfg.shared_trunk`` with a privileged critic or an oracle (they read
            different inputs).
    """

    def __init__(self, obs_dim: int, num_actions: int, cfg: NetworkConfig | None = None,
                 policy_bias: Tensor | None = None, obs_quantum: Tensor | None = None,
                 groups: Sequence[tuple[int, int]] | None = None, privileged_dim: int = 0):
        super().__init__()
        cfg = cfg or NetworkConfig()
        self.obs_dim, self.num_actions, self.cfg = obs_dim, num_actions, cfg
        self.privileged = cfg.critic == "privileged"
        self.oracle = bool(cfg.oracle)
        if (self.privileged or self.oracle) and cfg.shared_trunk:
            raise ValueError("network.shared_trunk cannot be combined with network.critic=privileged or network.oracle")
        if (self.privileged or self.oracle) and privileged_dim < 1:
            raise ValueError("a privileged critic or an oracle actor needs privileged_dim >= 1")
        self.privileged_dim = int(privileged_dim) if self.privileged or self.oracle else 0
        act = nn.ReLU if cfg.activation == "relu" else nn.Tanh
        self.sparse = cfg.input_layer == "sparse"
        self.actor_trunk = _mlp([obs_dim + (self.privileged_dim if self.oracle else 0), *cfg.hidden], act,
                                self.sparse)
        critic_hidden = cfg.critic_hidden or cfg.hidden
        self.critic_trunk = None if cfg.shared_trunk else _mlp(
            [obs_dim + (self.privileged_dim if self.privileged else 0), *critic_hidden], act, self.sparse)
        self.policy_head = layer_init(nn.Linear(cfg.hidden[-1], num_actions), std=0.01)
        self.value_head = layer_init(nn.Linear((cfg.hidden if cfg.shared_trunk else critic_hidden)[-1], 1), std=1.0)
        if policy_bias is not None:
            with torch.no_grad():
                self.policy_head.bias.copy_(policy_bias)
        q = torch.ones(obs_dim) if obs_quantum is None else torch.as_tensor(obs_quantum, dtype=torch.float32)
        self.register_buffer("obs_quantum", q, persistent=False)
        self.groups = tuple((int(a), int(b)) for a, b in (groups or ((0, num_actions),)))
        g = torch.zeros(num_actions, dtype=torch.long)
        for i, (a, b) in enumerate(self.groups):
            g[a:b] = i
        self.register_buffer("group_of", g, persistent=False)

    # ------------------------------------------------------------------ pieces
    def _autocast(self):
        if self.cfg.precision == "bfloat16":
            dev = self.obs_quantum.device.type
            return torch.autocast(device_type=dev, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _values(self, obs: Tensor) -> Tensor:
        """``float32[B, D]`` observation values from float values or uint8 numerators."""
        if obs.dtype == torch.uint8:
            return obs.float() * self.obs_quantum
        return obs.float()

    def _inputs(self, obs: Tensor, privileged: Tensor | None, critic: bool) -> SparseInput | Tensor:
        """The first layer's input: the active entries (sparse layer on the CPU, uint8 numerators)
        or dense float values; a privileged critic's, and an oracle actor's, include the
        privileged features."""
        sees = self.privileged if critic else self.oracle
        if sees and privileged is None:
            who = "a privileged critic" if critic else "an oracle actor (network.oracle)"
            raise ValueError(f"{who} needs the privileged features (uint8[B, P])")
        extra = privileged if sees else None
        if self.sparse and obs.dtype == torch.uint8 and obs.device.type == "cpu":
            parts = [(obs, self.obs_quantum)]
            if extra is not None:
                parts.append((extra, self.obs_quantum.new_ones(extra.shape[1])))
            return SparseInput.from_numerators(parts)
        x = self._values(obs)
        return x if extra is None else torch.cat([x, extra.float()], dim=-1)

    def _run(self, trunk: nn.Sequential, x: SparseInput | Tensor) -> Tensor:
        h = trunk[0](x)
        with self._autocast():
            for layer in trunk[1:]:
                h = layer(h)
        return h.float()

    def sparse_inputs(self, obs: Tensor, privileged: Tensor | None) -> tuple[SparseInput, SparseInput] | None:
        """The first layers' inputs of a whole batch (actor, critic), for :meth:`policy_terms`'s
        ``inputs`` after :meth:`SparseInput.take` of a minibatch's rows; None where the network
        does not take the sparse path (dense layer, float values, not on the CPU)."""
        if not (self.sparse and obs.dtype == torch.uint8 and obs.device.type == "cpu"):
            return None
        xa = self._inputs(obs, privileged, critic=False)
        xc = self._inputs(obs, privileged, critic=True) if self.privileged or self.oracle else xa
        return xa, xc

    def _hidden(self, obs: Tensor | None, privileged: Tensor | None, critic: bool = True,
                inputs: tuple[SparseInput, SparseInput] | None = None) -> tuple[Tensor, Tensor | None]:
        """(actor hidden ``float32[B, H]``, critic hidden or None); ``inputs``: the first layers'
        inputs already extracted (:meth:`sparse_inputs`), in place of ``obs`` and ``privileged``."""
        xa = inputs[0] if inputs is not None else self._inputs(obs, privileged, critic=False)
        h = self._run(self.actor_trunk, xa)
        if not critic:
            return h, None
        if self.critic_trunk is None:
            return h, h
        if inputs is not None:
            xc = inputs[1]
        else:
            xc = xa if not (self.privileged or self.oracle) else self._inputs(obs, privileged, critic=True)
        return h, self._run(self.critic_trunk, xc)

    # ------------------------------------------------------------------ full-head API
    def forward(self, obs: Tensor, privileged: Tensor | None = None) -> tuple[Tensor, Tensor]:
        h, hv = self._hidden(obs, privileged)
        return self.policy_head(h), self.value_head(hv).squeeze(-1)

    def logits(self, obs: Tensor, privileged: Tensor | None = None) -> Tensor:
        """``float32[B, A]`` policy logits only (no critic pass); ``privileged`` ``uint8[B, P]``
        only for an oracle (``cfg.oracle``), which raises ValueError without it."""
        return self.policy_head(self._hidden(obs, privileged, critic=False)[0])

    def value(self, obs: Tensor, privileged: Tensor | None = None) -> Tensor:
        """``float32[B]`` value estimates."""
        return self.forward(obs, privileged)[1]

    def critic_value(self, obs: Tensor, privileged: Tensor | None = None) -> Tensor:
        """``float32[B]`` value estimates (reward units) without running the actor (separate trunks);
        ``obs [B, D]`` values or numerators, ``privileged uint8[B, P]`` for a privileged critic.

        Raises:
            ValueError: a privileged critic without ``privileged``.
        """
        if self.critic_trunk is None:
            return self.value(obs, privileged)
        xc = self._inputs(obs, privileged, critic=True)
        return self.value_head(self._run(self.critic_trunk, xc)).squeeze(-1)

    def dist(self, obs: Tensor, mask: Tensor, privileged: Tensor | None = None) -> tuple[MaskedCategorical, Tensor]:
        """(masked distribution over all A ids, value) for ``obs [B, D]`` and ``mask bool[B, A]``
        (the full head; tests and integrations use it)."""
        logits, value = self.forward(obs, privileged)
        return MaskedCategorical(logits, mask), value

    # ------------------------------------------------------------------ grouped-head API
    def row_groups(self, mask: Tensor) -> Tensor:
        """``int64[B]``: the action group of each row (the group of its first legal action).

        Raises:
            ValueError: a row has no legal action, or legal actions in two groups.
        """
        m = mask.to(torch.bool)
        gid = self.group_of[m.to(torch.uint8).argmax(dim=-1)]
        if len(self.groups) > 1:
            per = torch.stack([m[:, a:b].any(dim=-1) for a, b in self.groups], dim=-1).sum(dim=-1)
            if bool((per != 1).any()):
                bad = int((per != 1).nonzero()[0, 0])
                what = "no legal action" if int(per[bad]) == 0 else "legal actions in two action groups"
                raise ValueError(f"mask row {bad} has {what} (auction calls and play-phase actions never mix)")
        elif not bool(m.any(dim=-1).all()):
            raise ValueError("every row of the mask needs at least one legal action")
        return gid

    def _group_rows(self, mask: Tensor, gid: Tensor | None = None) -> list[tuple[int, int, Tensor]]:
        """Per action group ``(start, stop, rows int64[k])`` of the rows whose legal actions lie in it
        (``gid``: :meth:`row_groups` of ``mask``, when the caller has it)."""
        if len(self.groups) == 1:
            a, b = self.groups[0]
            return [(a, b, torch.arange(mask.shape[0], device=mask.device))]
        if gid is None:
            gid = self.row_groups(mask)
        out = []
        for i, (a, b) in enumerate(self.groups):
            rows = (gid == i).nonzero().squeeze(-1)
            if rows.numel():
                out.append((a, b, rows))
        return out

    def _group_logits(self, h: Tensor, mask: Tensor, a: int, b: int, rows: Tensor) -> Tensor:
        lg = F.linear(h.index_select(0, rows), self.policy_head.weight[a:b], self.policy_head.bias[a:b])
        m = mask.index_select(0, rows)[:, a:b].to(torch.bool)
        return torch.where(m, lg, torch.full_like(lg, MASK_LOGIT))

    def policy_terms(self, obs: Tensor | None, mask: Tensor, actions: Tensor, privileged: Tensor | None = None,
                     with_value: bool = True, groups: Tensor | None = None,
                     inputs: tuple[SparseInput, SparseInput] | None = None) -> tuple[Tensor, Tensor, Tensor | None]:
        """``(log_prob float32[B], entropy float32[B], value float32[B] or None)`` of ``actions``
        (``int64[B]``, legal) under the masked policy, computed group by group (see the module doc;
        ``groups``: :meth:`row_groups` of ``mask``, when the caller has it; ``inputs``: the rows'
        first-layer inputs from :meth:`sparse_inputs`, in place of ``obs`` and ``privileged``, with
        the same result). Entropy is in nats over the legal actions only."""
        h, hv = self._hidden(obs, privileged, critic=with_value, inputs=inputs)
        B = h.shape[0]
        logp = h.new_empty(B)
        ent = h.new_empty(B)
        for a, b, rows in self._group_rows(mask, groups):
            lp = torch.log_softmax(self._group_logits(h, mask, a, b, rows), dim=-1)
            act = actions.index_select(0, rows) - a
            logp = logp.index_copy(0, rows, lp.gather(-1, act.unsqueeze(-1)).squeeze(-1))
            p = lp.exp()
            ent = ent.index_copy(0, rows, -(p * lp).sum(-1))
        value = self.value_head(hv).squeeze(-1) if with_value else None
        return logp, ent, value

    @torch.no_grad()
    def act(self, obs: Tensor, mask: Tensor, generator: torch.Generator | None = None, greedy: bool = False,
            privileged: Tensor | None = None, with_value: bool = True) -> tuple[Tensor, Tensor, Tensor | None]:
        """Sample (or, ``greedy``, take the most likely) legal actions, group by group.

        Args:
            obs: ``[B, D]`` observation values (float32) or numerators (uint8).
            mask: ``bool[B, A]`` legal actions (one action group per row).
            generator: the torch generator of the sampling (on the network's device).
            greedy: take the most likely legal action instead of sampling.
            privileged: ``uint8[B, P]`` hidden features (a privileged critic with ``with_value``;
                an oracle actor always).
            with_value: also compute the critic's value.

        Returns ``(actions int64[B], log_prob float32[B], value float32[B] or None)``.

        Raises:
            ValueError: a mask row with no legal action or with legal actions in two groups; a
                privileged critic asked for a value, or an oracle asked to act, without
                ``privileged``.
        """
        h, hv = self._hidden(obs, privileged, critic=with_value)
        B = h.shape[0]
        actions = torch.empty(B, dtype=torch.long, device=h.device)
        logp = h.new_empty(B)
        for a, b, rows in self._group_rows(mask):
            lp = torch.log_softmax(self._group_logits(h, mask, a, b, rows), dim=-1)
            if greedy:
                k = lp.argmax(dim=-1)
            else:  # inverse CDF (faster than torch.multinomial); a zero-probability id is never drawn
                c = lp.exp().cumsum(dim=-1)
                u = torch.rand(c.shape[0], 1, generator=generator, device=c.device) * c[:, -1:]
                k = torch.searchsorted(c, u, right=True).squeeze(-1).clamp_(max=c.shape[1] - 1)
            actions[rows] = k + a
            logp[rows] = lp.gather(-1, k.unsqueeze(-1)).squeeze(-1)
        value = self.value_head(hv).squeeze(-1) if with_value else None
        return actions, logp, value

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def build_policy(cfg: TrainConfig, encoder: Any, layout: ActionLayout) -> ActorCritic:
    """A freshly initialised policy for ``encoder`` (its size and ``quantum``) and ``layout``; the
    init draws from a private torch RNG seeded by ``cfg.seed``."""
    bias = initial_policy_bias(layout, cfg.network.policy_bias_init)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        return ActorCritic(encoder.size, layout.num_actions, cfg.network, policy_bias=bias,
                           obs_quantum=torch.from_numpy(encoder.quantum), groups=action_groups(layout),
                           privileged_dim=privileged_size(encoder.cfg.num_players))


def pad_oracle_inputs(state: dict[str, Tensor], oracle: ActorCritic) -> dict[str, Tensor]:
    """A non-oracle policy's weights (``state_dict``) fitted to ``oracle`` (``network.oracle``):
    the actor's first layer gets zero weights for the P hidden-card inputs that follow the D
    observation entries, so the oracle first acts exactly as the policy did.

    Raises:
        ValueError: ``oracle`` is not an oracle, or ``state``'s first actor layer is not its
            width over the D observation entries.
    """
    if not oracle.oracle:
        raise ValueError("pad_oracle_inputs: the target network is not an oracle (network.oracle=false)")
    key = "actor_trunk.0.weight"
    w, target = state[key], oracle.state_dict()[key]
    P = oracle.privileged_dim
    sparse = isinstance(oracle.actor_trunk[0], SparseLinear)  # [in, out]; a dense Linear's is [out, in]
    want = (target.shape[0] - P, target.shape[1]) if sparse else (target.shape[0], target.shape[1] - P)
    if tuple(w.shape) != want:
        raise ValueError(f"pad_oracle_inputs: {key} has shape {tuple(w.shape)}, expected {want} "
                         "(the oracle's first layer without its hidden-card inputs)")
    pad = w.new_zeros((P, w.shape[1]) if sparse else (w.shape[0], P))
    return {**state, key: torch.cat([w, pad], dim=0 if sparse else 1)}


def trainable_parameters(policy: ActorCritic, frozen: Sequence[str] = (), actor_inputs: Sequence[str] = (),
                         pieces: Sequence[Any] = ()) -> tuple[list[nn.Parameter], list[tuple[nn.Parameter, Tensor]]]:
    """What the PPO update trains (``ppo.frozen``, ``ppo.actor_inputs``).

    Args:
        policy: the network.
        frozen: parameter names of ``policy.named_parameters()`` or dotted prefixes of them
            (``actor_trunk`` holds ``actor_trunk.0.weight``; ``actor`` does not) to keep fixed.
        actor_inputs: observation piece names whose input weights of the actor's first layer
            train; the rest of that weight is kept fixed (empty: all of it trains). With
            ``network.shared_trunk`` the critic reads that layer too.
        pieces: the encoder's ``pieces`` (objects with ``name``, ``offset``, ``size``), needed
            with ``actor_inputs``.

    Returns:
        ``(params, masks)``: the parameters to hand to the optimizer, in ``policy.parameters()``
        order (all of them when nothing is restricted), and ``(parameter, mask)`` pairs: after
        each backward pass the update multiplies the parameter's gradient by the 0/1 ``float32``
        mask, which broadcasts over the weight (``[D, 1]`` for the sparse layer's ``[D, H]``,
        ``[1, D]`` for a dense layer's ``[H, D]``),
        so that the masked entries keep their values (Adam moves an entry whose gradient was
        always zero by nothing).

    Raises:
        ConfigError: a name of ``frozen`` matches no parameter, a piece is unknown, the actor's
            first-layer weight is frozen while ``actor_inputs`` asks to train part of it, or
            nothing is left to train. The messages name the parameters or pieces there are.
    """
    from blot_env.errors import ConfigError

    names = [n for n, _ in policy.named_parameters()]
    fixed: set[str] = set()
    for prefix in frozen:
        hit = [n for n in names if n == prefix or n.startswith(prefix + ".")]
        if not hit:
            raise ConfigError(f"ppo.frozen: {prefix!r} names no parameter of the network (or a dotted prefix of "
                              f"one); its parameters: {', '.join(names)}")
        fixed.update(hit)
    if policy.oracle and "actor_trunk.0.weight" in fixed:
        raise ConfigError("ppo.frozen keeps actor_trunk.0.weight fixed, so an oracle's (network.oracle) weights on "
                          "the hidden cards could never train; leave that weight out of ppo.frozen")
    masks: list[tuple[nn.Parameter, Tensor]] = []
    if actor_inputs:
        by_name = {p.name: p for p in pieces}
        unknown = [a for a in actor_inputs if a not in by_name]
        if unknown:
            raise ConfigError(f"ppo.actor_inputs: unknown observation piece(s) {unknown}; this observation's "
                              f"pieces: {', '.join(by_name)}")
        if "actor_trunk.0.weight" in fixed:
            raise ConfigError("ppo.actor_inputs trains part of actor_trunk.0.weight, which ppo.frozen keeps fixed; "
                              "leave that weight out of ppo.frozen")
        if policy.oracle:
            raise ConfigError("ppo.actor_inputs selects observation pieces of a seat's view; an oracle's first layer "
                              "(network.oracle) also reads the hidden cards: leave one of them unset")
        layer = policy.actor_trunk[0]
        rows = torch.zeros(policy.obs_dim)
        for a in actor_inputs:
            rows[by_name[a].offset:by_name[a].offset + by_name[a].size] = 1.0
        w = layer.weight
        mask = rows[:, None] if isinstance(layer, SparseLinear) else rows[None, :]
        masks.append((w, mask.to(w.device)))
    params = [p for n, p in policy.named_parameters() if n not in fixed]
    if not params:
        raise ConfigError(f"ppo.frozen keeps every parameter fixed ({', '.join(names)}): nothing would train")
    return params, masks


def block_uniform_bias(layout: ActionLayout) -> Tensor:
    """``float32[A]``: ``-log(block size)`` per action id, so equal logits elsewhere give each
    layout block (PASS, BID, CONTRA, PLAY, ...) the same total probability among legal blocks."""
    bias = torch.zeros(layout.num_actions)
    for b in layout.blocks.values():
        bias[b.start:b.stop] = -math.log(b.size)
    return bias


#: auction_prior: halving per ladder step, and the mass of the kaput blocks relative to a block
LADDER_DECAY = 0.5
KAPUT_MASS = 0.1


def auction_prior_bias(layout: ActionLayout) -> Tensor:
    """``float32[A]``: :func:`block_uniform_bias`, except that inside ``BID`` and ``KAPUT_PLUS``
    the probability halves with each step up the ladder (ids are ordered by level, then strain),
    and the ``KAPUT``/``KAPUT_PLUS`` blocks carry ``KAPUT_MASS`` of a block's probability."""
    bias = block_uniform_bias(layout)
    for name in ("BID", "KAPUT_PLUS"):
        if name not in layout.blocks:
            continue
        b = layout.blocks[name]
        per_level = len(layout.strains)
        levels = torch.arange(b.size) // per_level
        logw = levels * math.log(LADDER_DECAY)
        bias[b.start:b.stop] = logw - torch.logsumexp(logw, 0)
    for name in ("KAPUT", "KAPUT_PLUS"):
        if name in layout.blocks:
            b = layout.blocks[name]
            bias[b.start:b.stop] += math.log(KAPUT_MASS)
    return bias


def initial_policy_bias(layout: ActionLayout, kind: str) -> Tensor | None:
    """The policy-head bias of ``NetworkConfig.policy_bias_init`` (None for ``zero``)."""
    if kind == "auction_prior":
        return auction_prior_bias(layout)
    if kind == "block_uniform":
        return block_uniform_bias(layout)
    return None


__all__ = ["ActorCritic", "action_groups", "auction_prior_bias", "block_uniform_bias",
           "build_policy", "initial_policy_bias", "layer_init", "trainable_parameters"]
