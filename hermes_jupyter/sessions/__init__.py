"""Sessions on disk: the sidecar store, the sorted listing, titles and all-or-nothing deletion.

See docs/architecture.md (the sessions wing).
"""
