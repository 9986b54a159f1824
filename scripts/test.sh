#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, lints, then runs every test
# (unit tests next to the code, integration tests against throwaway mariadbd instances) on
# both supported Node.js lines: 24 (active LTS) and 22 (maintenance LTS). Both are fetched by
# scripts/ensure-node.sh whatever Node the machine carries; npm, the build and the lint run on
# Node 24. Both lines always run, and one summary follows (scripts/run-tests.sh); the exit
# code is non-zero when either failed.
set -euo pipefail
cd "$(dirname "$0")/.."
node24="$(bash scripts/ensure-node.sh 24)"
node22="$(bash scripts/ensure-node.sh 22)"
export PATH="${node24}:${PATH}"
bash scripts/ensure-deps.sh
npm run lint --silent
mapfile -t files < <(find dist/src dist/test -name '*.test.js' | sort)
export TZ=UTC
exec bash scripts/run-tests.sh "${node24}" "${node22}" -- "${files[@]}"
