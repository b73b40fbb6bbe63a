# The real local model (llama.cpp with SmolLM2, tests/fakes/local_model.py) is a session fixture any test can ask for.
pytest_plugins = ["tests.hermes_fixtures", "tests.fakes.local_model", "pytest_jupyter.jupyter_server"]
