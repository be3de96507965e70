#!/usr/bin/env bash
# Starts the packager service on a fresh machine that has only Node 20 and npm:
# pnpm 10.34.9 (installed with npm if missing) -> frozen install -> build the app and the packages it uses
# -> node apps/packager-api/dist/main.js.
# Configuration comes from the environment (apps/packager-api/README.md); defaults: 127.0.0.1:39575.
set -euo pipefail
cd "$(dirname "$0")/.."
want=10.34.9
if [ "$(pnpm --version 2>/dev/null || true)" != "$want" ]; then
  npm i -g "pnpm@$want" >/dev/null
fi
pnpm install --frozen-lockfile
pnpm --filter @org/packager-api... build
exec node apps/packager-api/dist/main.js
