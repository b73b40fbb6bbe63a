"""Small scripted stand-ins (model servers, sinks) that tests drive instead of real services."""
