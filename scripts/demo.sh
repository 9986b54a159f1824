#!/usr/bin/env bash
# Quick start: install what is missing, start a throwaway MariaDB, and run sonde against it
# (log sink on stdout, API on 127.0.0.1:7522). Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
exec node scripts/demo.mjs "$@"
