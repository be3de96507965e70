#!/usr/bin/env bash
# Builds Dockerfile.agent with podman (toolchain.md §10; the podman setup and base image come from
# scripts/container-smoke.sh, which calls this script at its end), then runs the image three ways: without a
# bootstrap (one fatal line, exit 1), with a mounted bootstrap file, and with an encrypted bootstrap in
# AGENT_BOOTSTRAP; calls the HTTP trigger and requires a clean SIGTERM stop. Needs root and built packages
# (pnpm -r build) to make the test package. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${SMOKE_AGENT_PORT:-39580}"
NAME=agent-smoke
log() { printf '[smoke-agent] %s\n' "$*"; }
S="${XDG_STATE_HOME:-$HOME/.local/state}/podman-local"
export CONTAINERS_CONF="$S/containers.conf" CONTAINERS_STORAGE_CONF="$S/storage.conf"
podman image exists node:20-bookworm-slim || { log "no local base image: run scripts/container-smoke.sh"; exit 1; }

log "building the image"
podman build --pull=never -f Dockerfile.agent -t agent .

WORK="$(mktemp -d)"
cleanup() {
  podman rm -f "$NAME" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

log "no bootstrap:"
set +e
podman run --rm agent 2>&1 | tail -n 1
set -e

# A package, a plain bootstrap file and an encrypted bootstrap, made with the libraries from the repo.
(cd apps/agent-runtime && node --input-type=module - "$WORK" "$PORT") <<'JS'
import { writeFileSync } from 'node:fs';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { createPackage, encryptBootstrap } from '@org/oapp-format';
const [dir, port] = process.argv.slice(2);
const packager = generateKeyPair('authenticated'), deployment = generateKeyPair('authenticated');
const agent = generateKeyPair('authenticated'), author = generateKeyPair('sign');
const workflow = { workflows: [{ name: 'smoke', steps: [{ stepId: 'hello',
  trigger: { http: { server: 'api', method: 'POST', path: '/hello' } },
  resultsProcessor: { script: "context.setBody('hello ' + JSON.parse(context.getBody()).name)" } }] }] };
writeFileSync(`${dir}/app.oapp`, createPackage({ packageId: 'smoke', content: new TextEncoder().encode(JSON.stringify(workflow)),
  packagerSecretKey: packager.secretKey, recipients: [deployment.publicKey], signers: [{ secretKey: author.secretKey, signText: 'smoke' }] }));
const bootstrap = [{ deploymentId: 'smoke-1', remoteConfiguration: '/config/app.oapp',
  packaging: { packageId: 'smoke', packagerIdentities: ['packager'], requiredSigners: [{ id: 'author' }] },
  keys: [{ id: 'packager', purpose: 'authenticated', type: 'public', keyHex: keyToHex(packager.publicKey) },
    { id: 'self', purpose: 'authenticated', type: 'secret', keyHex: keyToHex(deployment.secretKey) },
    { id: 'author', purpose: 'sign', type: 'public', keyHex: keyToHex(author.publicKey) }],
  allowHttpServerAccess: [{ id: 'api', port: Number(port), bindAddress: '0.0.0.0' }] }];
writeFileSync(`${dir}/bootstrap.json`, JSON.stringify(bootstrap));
writeFileSync(`${dir}/bootstrap.enc`, encryptBootstrap(new TextEncoder().encode(JSON.stringify(bootstrap)),
  { packagerSecretKey: packager.secretKey, recipients: [agent.publicKey] }));
writeFileSync(`${dir}/secretkey`, `${keyToHex(packager.publicKey)}/${keyToHex(agent.secretKey)}`);
JS
chmod -R a+rX "$WORK"

run_and_call() {
  podman rm -f "$NAME" >/dev/null 2>&1 || true
  podman run -d --name "$NAME" --read-only --memory 256m -v "$WORK:/config:ro" "$@" agent >/dev/null
  for _ in $(seq 1 60); do
    podman logs "$NAME" 2>/dev/null | grep -q '"listening"' && break
    sleep 0.5
  done
  podman logs "$NAME" | grep '"listening"'
  reply="$(curl -fsS -X POST "http://127.0.0.1:$PORT/hello" -H 'content-type: application/json' -d '{"name":"container"}')"
  log "trigger answered: $reply"
  [ "$reply" = "hello container" ] || { log "unexpected reply"; exit 1; }
  start=$(date +%s)
  podman stop -t 10 "$NAME" >/dev/null
  took=$(($(date +%s) - start))
  code="$(podman inspect --format '{{.State.ExitCode}}' "$NAME")"
  log "stopped in ${took}s with exit code $code"
  [ "$code" = 0 ] && [ "$took" -lt 10 ] || { log "unclean stop"; exit 1; }
}

log "bootstrap from a mounted file:"
run_and_call -e AGENT_BOOTSTRAP=/config/bootstrap.json
log "encrypted bootstrap from the environment:"
run_and_call -e AGENT_BOOTSTRAP="$(cat "$WORK/bootstrap.enc")" -e AGENT_BOOTSTRAP_SECRETKEY="$(cat "$WORK/secretkey")"
log "OK"
