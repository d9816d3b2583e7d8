"""Adapters of the blot environments to third-party RL libraries (optional; docs/integrations.md).

Nothing here is imported by ``import blot_env``: each adapter module imports its library at
the top, so import the one you need explicitly, in a virtualenv that has the library. These
adapters wrap only the environments; adapters that need the agents (the RLlib module around
our PPO network) live in :mod:`agents.integrations`, and runnable examples in the
repository's ``integrations/`` folder.

* :mod:`blot_env.integrations.torchrl` (``pip install -e ".[torchrl]"``): TorchRL's
  ``PettingZooWrapper`` around ``blot_env.env(...)`` with masks, groups per team.
* :mod:`blot_env.integrations.tianshou` (``pip install -e ".[tianshou]"``): Tianshou's
  ``PettingZooEnv`` and ``MultiAgentPolicyManager`` with masked random and DQN policies.
"""
