"""agents.eval."""
