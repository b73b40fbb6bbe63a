#!/usr/bin/env bash
# ensure_debian_package.sh COMMAND PACKAGE: install Debian's PACKAGE unless COMMAND is already on PATH.
# Idempotent and instant when present; apt-get update runs only before an install.
set -euo pipefail
command_name="$1" package="$2"
if command -v "$command_name" >/dev/null 2>&1; then exit 0; fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "ensure_debian_package: installing Debian $package"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$package" >/dev/null
command -v "$command_name"
