#!/usr/bin/env bash
# Sets up and runs every test on a fresh machine that has only Node 20 and npm.
# install (frozen lockfile) -> build -> regenerate test vectors (must be unchanged) -> typecheck -> lint -> vitest.
set -euo pipefail
cd "$(dirname "$0")/.."
want=10.34.9
if [ "$(pnpm --version 2>/dev/null || true)" != "$want" ]; then
  npm i -g "pnpm@$want" >/dev/null
fi
pnpm install --frozen-lockfile
# Every test's temporary files go under one directory of this run, removed at the end (tests that leave theirs
# behind, such as servers' resource directories, do not pile up in /tmp run after run).
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/oapp-ci-XXXXXX")
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
# The inspection page's browser tests drive Debian's Chromium (apps/inspect-page, docs/adr/0146).
if [ ! -x /usr/bin/chromium ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
pnpm -s build
# Test vectors are generated from fixed seeds and never edited by hand: regenerate every set and
# fail if anything changed (the generators are deterministic).
vectors_digest() { find packages/*/testdata packages/*/SPEC.md -type f -print0 | sort -z | xargs -0 sha256sum; }
before=$(vectors_digest)
pnpm -s -r --if-present generate >/dev/null
after=$(vectors_digest)
if [ "$before" != "$after" ]; then
  echo "generated test vectors differ from the files in the tree:"
  diff <(echo "$before") <(echo "$after") || true
  exit 1
fi
pnpm -s typecheck
pnpm -s lint
# Called directly (not `pnpm test`) so the closing summary line is the last line printed.
pnpm exec vitest run
