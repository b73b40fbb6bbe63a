# The real local model (llama.cpp with SmolLM2, tests/fakes/local_model.py) and the real hermes-agent install
# (hermes_python, tests/agents/hermes_fixtures) are session fixtures any test can ask for.
pytest_plugins = ["tests.hermes_fixtures", "tests.fakes.local_model", "tests.agents.hermes_fixtures",
                  "pytest_jupyter.jupyter_server"]
