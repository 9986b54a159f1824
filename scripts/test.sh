#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, lints, then runs every test
# (unit tests next to the code, integration tests against throwaway mariadbd instances).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
npm run lint --silent
mapfile -t files < <(find dist/src dist/test -name '*.test.js' | sort)
export TZ=UTC
exec node --test --test-concurrency=2 --test-reporter=spec "${files[@]}"
