#!/usr/bin/env bash
# Debian's bubblewrap, the sandbox the hermes backend runs a shell- or file-capable agent in
# (docs/agent-reach.md). Idempotent: returns at once when bwrap is already installed.
set -euo pipefail
if command -v bwrap >/dev/null 2>&1; then exit 0; fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "ensure_bubblewrap: installing Debian bubblewrap"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq bubblewrap >/dev/null
command -v bwrap
