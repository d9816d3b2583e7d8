"""Adapters of the agents (our PPO network and policy format) to third-party RL libraries
(optional; docs/integrations.md).

Adapters that wrap only the environments live in :mod:`blot_env.integrations`; those that
also need ``agents`` (a network, a policy file, the duplicate evaluation) live here, so that
``blot_env`` imports nothing from ``agents``. Nothing here is imported by ``import agents``;
import the module you need in a virtualenv that has the library:

* :mod:`agents.integrations.rllib` (``pip install -e ".[rllib]"``): Ray RLlib's new API
  stack: :class:`~agents.integrations.rllib.BlotMultiAgentEnv` (a ``MultiAgentEnv``), the
  masked actor-critic ``RLModule`` around :class:`agents.ppo.network.ActorCritic`, the
  per-team / frozen-opponent league mapping and the ``AlgorithmConfig`` builder used by
  ``integrations/rllib/train_rllib.py``.
* :mod:`agents.integrations.rllib_config` (no Ray needed): the typed, frozen config of an
  RLlib run (``configs/rllib_*.yaml``).
"""
