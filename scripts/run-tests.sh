#!/usr/bin/env bash
# Runs the given test files on each Node.js line and prints one summary at the end, whatever
# failed on the way: `run-tests.sh BIN_DIR... -- FILE...`, each BIN_DIR holding a `node`.
# Exits 1 when any line had a failing test (or its runner failed), else 0.
set -uo pipefail
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  bins+=("$1")
  shift
done
[ $# -gt 0 ] && shift
files=("$@")
if [ ${#bins[@]} -eq 0 ] || [ ${#files[@]} -eq 0 ]; then
  echo "usage: run-tests.sh BIN_DIR... -- FILE..." >&2
  exit 2
fi
out="$(mktemp -d)"
trap 'rm -rf "${out}"' EXIT
summary=()
failed=0
for bin in "${bins[@]}"; do
  version="$("${bin}/node" --version)"
  echo "sonde: tests on Node ${version} (${bin})" >&2
  # Three test files at a time: most of the suite waits on the processes it starts (mariadbd,
  # chromium, the agent) and on their deadlines, so two at a time kept this 2-CPU machine's
  # CPUs 54 % busy (user+system over wall time, both lines: 14.6 minutes).
  PATH="${bin}:${PATH}" "${bin}/node" --test --test-concurrency=3 --test-reporter=spec "${files[@]}" |
    tee "${out}/log"
  code=${PIPESTATUS[0]}
  count() { grep -E "^ℹ $1 [0-9]+$" "${out}/log" | tail -1 | awk '{print $3}'; }
  line="Node ${version}: $(count pass || true) passed, $(count fail || true) failed, $(count skipped || true) skipped"
  if [ "${code}" -ne 0 ]; then
    failed=1
    line="${line} -- FAILED (exit ${code})"
  fi
  summary+=("${line}")
done
echo "sonde: test summary" >&2
for line in "${summary[@]}"; do echo "  ${line}" >&2; done
if [ "${failed}" -ne 0 ]; then
  echo "sonde: tests FAILED" >&2
  exit 1
fi
echo "sonde: all tests passed" >&2
