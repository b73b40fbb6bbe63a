#!/usr/bin/env bash
# Debian's chromium for the browser tests (Playwright drives it with executable_path; we never download a browser).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "ensure_chromium: installing Debian chromium"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
command -v chromium
