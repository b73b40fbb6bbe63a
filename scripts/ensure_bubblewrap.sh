#!/usr/bin/env bash
# Debian's bubblewrap, the sandbox the hermes backend runs its agent in (docs/agent-reach.md).
set -euo pipefail
exec bash "$(dirname "$0")/ensure_debian_package.sh" bwrap bubblewrap
