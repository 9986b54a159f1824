#!/usr/bin/env bash
# Install what sonde's demo and tests need on a fresh Debian 12 machine (run as root):
# the mariadb-server package and the npm packages (npm ci builds via `prepare`).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
  echo "sonde: installing mariadb-server (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # policy-rc.d keeps the package from starting a system-wide server: tests start their own.
  apt-get install -y -qq mariadb-server mariadb-client >/dev/null
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
else
  npm run build --silent
fi
