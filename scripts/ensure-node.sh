#!/usr/bin/env bash
# Prints the bin directory of a Node.js of the given major version (default 24), fetching the
# official binary once from the npm registry (package node-linux-<arch>, no install script
# runs) into .cache/node/<major>/. Used by the test and demo scripts so they run on a current
# LTS line whatever Node the machine carries.
set -euo pipefail
major="${1:-24}"
cd "$(dirname "$0")/.."
dir=".cache/node/${major}"
if [ ! -x "${dir}/bin/node" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    # A machine without any Node: Debian's npm (and its node) only to fetch the binary.
    echo "sonde: installing npm (apt-get) to fetch Node.js ${major}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq npm >/dev/null
  fi
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "ensure-node: no Node.js binary package for $(uname -m)" >&2; exit 1 ;;
  esac
  tmp="$(mktemp -d)"
  trap 'rm -rf "${tmp}"' EXIT
  (cd "${tmp}" && npm pack --silent "node-linux-${arch}@${major}" >/dev/null)
  tar xzf "${tmp}"/node-linux-*.tgz -C "${tmp}"
  rm -rf "${dir}"
  mkdir -p "${dir}"
  cp -r "${tmp}/package/." "${dir}/"
fi
echo "$(pwd)/${dir}/bin"
