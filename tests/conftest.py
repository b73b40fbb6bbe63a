pytest_plugins = ["tests.hermes_fixtures"]
