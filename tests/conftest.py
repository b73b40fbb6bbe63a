pytest_plugins = ["tests.hermes_fixtures", "pytest_jupyter.jupyter_server"]
