"""agents.baselines."""
