"""Recovery of dead runs: what a journal proves (evidence), which runs are live (liveness), and the repair.

See docs/architecture.md (the recovery wing).
"""
