"""blot-env: the blot family of card games (Bazar Blot, duels, Open Blot, Belote) for RL."""

from .rules_config import PRESETS, RulesConfig, make_rules

__version__ = "0.1.0"
__all__ = ["PRESETS", "RulesConfig", "__version__", "make_rules"]
