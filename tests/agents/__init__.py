"""Tests of the agent backends, mirroring `hermes_jupyter/agents/`."""
