#!/usr/bin/env bash
# Refreshes the committed screenshots of the web page (docs/img/ui-fleet.png and
# docs/img/ui-monitor.png): builds, then runs the browser test with SONDE_SCREENSHOTS set to
# docs/img. A plain test run writes its screenshots to a temp dir and leaves docs/ alone.
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$(bash scripts/ensure-node.sh 24):${PATH}"
export PATH
npx tsc -p tsconfig.json
SONDE_SCREENSHOTS="$(pwd)/docs/img" TZ=UTC node --test --test-reporter=spec dist/test/e2e/web-ui.test.js
