#!/usr/bin/env bash
# Quick start: install what is missing, start a throwaway MariaDB, and run sonde against it
# (log sink on stdout, API on 127.0.0.1:7522). Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
# Node 24 (active LTS), fetched once whatever Node the machine carries.
PATH="$(bash scripts/ensure-node.sh 24):${PATH}"
export PATH
bash scripts/ensure-deps.sh
exec node scripts/demo.mjs "$@"
