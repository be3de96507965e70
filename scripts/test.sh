#!/usr/bin/env bash
# Sets up and runs every test on a fresh machine that has only Node 20 and npm.
# install (frozen lockfile) -> build -> typecheck -> lint -> vitest (all projects).
set -euo pipefail
cd "$(dirname "$0")/.."
want=10.34.9
if [ "$(pnpm --version 2>/dev/null || true)" != "$want" ]; then
  npm i -g "pnpm@$want" >/dev/null
fi
pnpm install --frozen-lockfile
pnpm -s build
pnpm -s typecheck
pnpm -s lint
# Called directly (not `pnpm test`) so the closing summary line is the last line printed.
pnpm exec vitest run
