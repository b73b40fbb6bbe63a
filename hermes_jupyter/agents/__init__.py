"""Agent backends: the demo agent, any OpenAI-compatible endpoint, Hermes Agent out of process."""
