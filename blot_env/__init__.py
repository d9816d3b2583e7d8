"""blot-env: the blot family of card games (Bazar Blot, duels, Open Blot, Belote) for RL."""

from .rules_config import PRESETS, RulesConfig, make_rules

__version__ = "0.1.0"
__all__ = ["PRESETS", "RulesConfig", "__version__", "make_rules"]

# The environments. Importing registers every preset with PettingZoo
# ("blot/bazar_blot_v0", ...) and Gymnasium ("BlotBazar-v0", ...).
from .env import ENV_VERSION, env, env_id, make, parallel_env, raw_env, register_envs
from .gym_env import BlotGymEnv, register_gym_envs
from .observation import ObservationEncoder, observation_layout_markdown

register_envs()
register_gym_envs()
__all__ += ["ENV_VERSION", "BlotGymEnv", "ObservationEncoder", "env", "env_id", "make",
            "observation_layout_markdown", "parallel_env", "raw_env"]
