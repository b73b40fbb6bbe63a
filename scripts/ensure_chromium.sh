#!/usr/bin/env bash
# Debian's chromium for the browser tests (Playwright drives it with executable_path; we never download a browser).
set -euo pipefail
exec bash "$(dirname "$0")/ensure_debian_package.sh" chromium chromium
