#!/usr/bin/env bash
# Builds Dockerfile.packager with podman (toolchain.md §10), runs it with the three resource mounts, calls
# /health, packages a workflow with keys from /key-gen, checks the oapp magic bytes, stops the container with
# SIGTERM and requires a clean exit. Needs root. Setup steps already done are skipped. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."

port_free() { ! ss -ltn 2>/dev/null | awk '{print $4}' | grep -qE "[:.]$1\$"; }
# The container shares the host network (netns = "host"): use 39575 when free, else any free port.
PORT="${SMOKE_PORT:-39575}"
if [ -z "${SMOKE_PORT:-}" ] && ! port_free "$PORT"; then
  PORT="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
fi
NAME=packager-smoke
log() { printf '[smoke] %s\n' "$*"; }

# --- toolchain.md §10: podman with runc, overlay storage, a local base image ---------------------------------
if ! command -v podman >/dev/null || ! command -v buildah >/dev/null || ! command -v runc >/dev/null ||
  ! command -v debootstrap >/dev/null; then
  log "installing podman buildah runc debootstrap"
  apt-get update && apt-get install -y podman buildah runc debootstrap
fi
S="${XDG_STATE_HOME:-$HOME/.local/state}/podman-local"
mkdir -p "$S"
printf '%s\n' '[containers]' 'default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]' 'netns = "host"' \
  '[engine]' 'runtime = "runc"' 'cgroup_manager = "cgroupfs"' 'events_logger = "file"' >"$S/containers.conf"
printf '%s\n' '[storage]' 'driver = "overlay"' "graphroot = \"$S/storage\"" "runroot = \"$S/run\"" >"$S/storage.conf"
export CONTAINERS_CONF="$S/containers.conf" CONTAINERS_STORAGE_CONF="$S/storage.conf"

# The official node images have a uid-1000 "node" user (Dockerfile.packager runs as it); the local one must too.
if ! podman image exists node:20-bookworm-slim || ! podman run --rm node:20-bookworm-slim id node >/dev/null 2>&1; then
  R="$S/basefs"
  if [ ! -x "$R/usr/bin/env" ]; then
    log "debootstrap bookworm (about 30 s)"
    debootstrap --variant=minbase bookworm "$R"
  fi
  install -D "$(command -v node)" "$R/usr/local/bin/node"
  mkdir -p "$R/usr/local/lib/node_modules"
  cp -a "$(npm root -g)/npm" "$R/usr/local/lib/node_modules/"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$R/usr/local/bin/npm"
  install -D -m 644 "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "$R/etc/ssl/certs/ca-certificates.crt"
  # The image's own user: uid 1000 "node", as in the official node images.
  grep -q '^node:' "$R/etc/passwd" || chroot "$R" useradd --uid 1000 --create-home --shell /bin/sh node
  tar -C "$R" -cf "$S/base.tar" .
  podman import --change 'CMD ["node"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' "$S/base.tar" node:20-bookworm-slim
fi

# --- build -----------------------------------------------------------------------------------------------------
log "building the image"
podman build --pull=never -f Dockerfile.packager -t packager .

# --- run with the three mounts ---------------------------------------------------------------------------------
WORK="$(mktemp -d)"
cleanup() {
  podman rm -f "$NAME" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/community/general" "$WORK/local1" "$WORK/local2"
echo "context.setBody('hello');" >"$WORK/community/general/hello.js"
chmod -R a+rX "$WORK"
podman rm -f "$NAME" >/dev/null 2>&1 || true
podman run -d --name "$NAME" --read-only --memory 256m -e PORT="$PORT" -p "$PORT:$PORT" \
  -v "$WORK/community:/community-resources:ro" -v "$WORK/local1:/local-resources1:ro" \
  -v "$WORK/local2:/local-resources2:ro" packager >/dev/null
BASE="http://127.0.0.1:$PORT"

running() { [ "$(podman inspect --format '{{.State.Running}}' "$NAME" 2>/dev/null)" = true ]; }
for _ in $(seq 1 60); do
  running || { log "the container stopped:"; podman logs "$NAME" | tail -n 5; exit 1; }
  podman logs "$NAME" 2>/dev/null | grep -q '"listening"' && curl -fsS "$BASE/health" >/dev/null 2>&1 && break
  sleep 0.5
done
log "container listening: $(podman logs "$NAME" | grep '"listening"')"
log "health: $(curl -fsS "$BASE/health")"

# --- package a workflow ----------------------------------------------------------------------------------------
keygen() { curl -fsS "$BASE/key-gen?purpose=$1"; }
PACKAGER="$(keygen authenticated)" RECIPIENT="$(keygen authenticated)" SIGNER="$(keygen sign)" node -e '
  const k = (v) => JSON.parse(process.env[v]).keyPair;
  const body = {
    packageId: "smoke",
    keys: [
      { id: "packager", purpose: "authenticated", type: "secret", keyHex: k("PACKAGER").secretKeyHex },
      { id: "alice", purpose: "authenticated", type: "public", keyHex: k("RECIPIENT").publicKeyHex },
      { id: "author", purpose: "sign", type: "secret", keyHex: k("SIGNER").secretKeyHex },
    ],
    signers: [{ key: "author", signText: "smoke test" }],
    encryptionKeys: ["alice"],
    packagerIdentityPrivateKey: "packager",
  };
  require("fs").writeFileSync(process.argv[1], JSON.stringify(body));
' "$WORK/body.json"
cat >"$WORK/workflow.json" <<'JSON'
{"workflows":[{"name":"smoke","steps":[{"stepId":"s1","trigger":{"runOnce":true},"resultsProcessor":{"resource":"/general/hello.js"}}]}]}
JSON
status="$(curl -sS -o "$WORK/smoke.oapp" -w '%{http_code}' -X POST "$BASE/workflow-package" \
  -H 'Accept: application/octet-stream' -F "body=<$WORK/body.json" \
  -F "stream=@$WORK/workflow.json;type=application/octet-stream")"
[ "$status" = 200 ] || { log "workflow-package answered $status: $(cat "$WORK/smoke.oapp")"; exit 1; }
magic="$(head -c 8 "$WORK/smoke.oapp" | od -An -tx1 | tr -d ' \n')"
[ "$magic" = 894f4150500d0a1a ] || { log "not an oapp package (magic $magic)"; exit 1; }
log "packaged: $(wc -c <"$WORK/smoke.oapp") bytes, magic $magic"

# --- stop with SIGTERM: a clean exit well before podman's 10 s kill ---------------------------------------------
start=$(date +%s)
podman stop -t 10 "$NAME" >/dev/null
took=$(($(date +%s) - start))
code="$(podman inspect --format '{{.State.ExitCode}}' "$NAME")"
log "stopped in ${took}s with exit code $code"
podman logs "$NAME" | tail -n 3
[ "$code" = 0 ] && [ "$took" -lt 10 ] || { log "unclean stop"; exit 1; }
log "OK"

# --- the agent image: Dockerfile.agent (scripts/container-smoke-agent.sh) ----------------------------------------
bash scripts/container-smoke-agent.sh
