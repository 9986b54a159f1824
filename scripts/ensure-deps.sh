#!/usr/bin/env bash
# Install what sonde's demo and tests need on a fresh Debian 12 machine (run as root):
# the mariadb-server package and the npm packages (npm ci builds via `prepare`).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
[ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server mariadb-client)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v setpriv >/dev/null 2>&1 || missing+=(util-linux)
[ -x /usr/bin/prometheus-pushgateway ] || missing+=(prometheus-pushgateway)
[ -x /usr/bin/prometheus-mysqld-exporter ] || missing+=(prometheus-mysqld-exporter)
# MyRocks: the RocksDB variables test starts a MariaDB with this engine.
[ -f /usr/lib/mysql/plugin/ha_rocksdb.so ] || missing+=(mariadb-plugin-rocksdb)
{ [ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ]; } || missing+=(prometheus)
# The web page's browser test drives Debian's chromium headless (puppeteer-core, no download).
[ -x /usr/bin/chromium ] || missing+=(chromium)
# systemd-analyze checks deploy/sonde.service (the tests need the tool, not a booted systemd).
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
if [ ${#missing[@]} -gt 0 ]; then
  echo "sonde: installing ${missing[*]} (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # The package's own server is not needed: tests and the demo start throwaway ones.
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
else
  npm run build --silent
fi
