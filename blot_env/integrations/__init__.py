"""Adapters of the blot environments to third-party RL libraries (optional; docs/integrations.md).

Nothing here is imported by ``import blot_env``: each adapter module imports its library at
the top, so import the one you need explicitly, in a virtualenv that has the library:

* :mod:`blot_env.integrations.rllib` (``pip install -e ".[rllib]"``): Ray RLlib's new API
  stack: :class:`~blot_env.integrations.rllib.BlotMultiAgentEnv` (a ``MultiAgentEnv``), the
  masked actor-critic ``RLModule``, the per-team / frozen-opponent league mapping and the
  ``AlgorithmConfig`` builder used by ``scripts/train_rllib.py``.
* :mod:`blot_env.integrations.rllib_config` (no Ray needed): the typed, frozen config of an
  RLlib run (``configs/rllib_*.yaml``).
* :mod:`blot_env.integrations.torchrl` (``pip install -e ".[torchrl]"``): TorchRL's
  ``PettingZooWrapper`` around ``blot_env.env(...)`` with masks, groups per team.
* :mod:`blot_env.integrations.tianshou` (``pip install -e ".[tianshou]"``): Tianshou's
  ``PettingZooEnv`` and ``MultiAgentPolicyManager`` with masked random and DQN policies.
"""
