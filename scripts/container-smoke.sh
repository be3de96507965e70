#!/usr/bin/env bash
# Runs the container commands of README.md exactly as written, with podman, from a clean checkout (no pnpm
# install or build needed on the host): the blocks marked `<!-- container-smoke: NAME -->` (build, packager, the
# "Run a package" walkthrough, agent, stop, then packager-agent and packager-agent-stop), in that order, in one shell
# where `docker` is podman (scripts/podman-local.sh). Between them it checks what the README promises: the services
# answer through ports published on 127.0.0.1 only (bridge network), run as uid 1000 with a read-only root, pass
# their HEALTHCHECK, work with another working directory (-w), stop on SIGTERM with exit code 0, and leave no build
# stage behind. Needs root (podman, apt-get). Not part of CI (no container runtime there); it prints how long it
# took (README.md: about 10 minutes on a busy 2-core machine, most of it the three image builds).
#   git clone -b BRANCH REPO /tmp/x && cd /tmp/x && bash scripts/container-smoke.sh
# With --docker-cli the blocks run with the docker client instead, on podman's Docker API (podman system service).
# With --packager-agent only the packager on the agent (ADR 0137): the build block without the Express image, then
# its own blocks and checks.
set -euo pipefail
SMOKE_START=$(date +%s)
DOCKER_CLI=false
ONLY_PACKAGER_AGENT=false
for arg in "$@"; do
  case "$arg" in
    --docker-cli) DOCKER_CLI=true ;;
    --packager-agent) ONLY_PACKAGER_AGENT=true ;;
    *)
      echo "usage: bash scripts/container-smoke.sh [--docker-cli] [--packager-agent]" >&2
      exit 2
      ;;
  esac
done
cd "$(dirname "$0")/.."
ROOT=$PWD
log() { printf '[smoke] %s\n' "$*"; }
elapsed() { echo "$(($(date +%s) - SMOKE_START)) s"; }
fail() {
  log "FAILED: $*"
  log "took $(elapsed)"
  exit 1
}

# shellcheck source=scripts/podman-local.sh
source scripts/podman-local.sh
log "podman $(podman version --format '{{.Client.Version}}'), network backend $(podman info --format '{{.Host.NetworkBackend}}')"

NAMES=(oapp-packager oapp-agent oapp-smoke-w1 oapp-smoke-w2 oapp-smoke-nobootstrap oapp-packager-agent oapp-smoke-w3
  oapp-smoke-t1 oapp-smoke-t2)
remove_containers() { for n in "${NAMES[@]}"; do podman rm -f "$n" >/dev/null 2>&1 || true; done; }
remove_containers
WORK="$(mktemp -d)"
SERVICE=
trap 'remove_containers; [ -z "$SERVICE" ] || kill "$SERVICE"; rm -rf "$WORK"' EXIT
if $DOCKER_CLI; then
  command -v docker >/dev/null || fail "--docker-cli: no docker client"
  unset -f docker
  podman system service --time=0 "unix://$WORK/podman.sock" 2>"$WORK/service.log" &
  SERVICE=$!
  export DOCKER_HOST="unix://$WORK/podman.sock"
  for _ in $(seq 1 50); do docker version >/dev/null 2>&1 && break; sleep 0.2; done
  log "docker client $(docker version --format '{{.Client.Version}}') on podman's Docker API $(docker version --format '{{.Server.Version}}')"
fi

# --- the README blocks ---------------------------------------------------------------------------------------
block() { # the fenced sh block after the marker line
  awk -v m="<!-- container-smoke: $1 -->" '
    $0 == m { found = 1; next }
    found && /^```sh$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }' README.md
}
for b in build packager walkthrough agent stop packager-agent packager-agent-stop; do
  [ -n "$(block "$b")" ] || fail "README.md has no container-smoke block '$b'"
done

SUBST=() # sed expressions for taken ports, set before the blocks that publish them
SKIP_LINES= # a pattern of block lines not run (--packager-agent: the Express image's build)
run_blocks() { # NAME... : run the blocks in one bash with -euo pipefail; the working directory carries over
  {
    echo 'set -euo pipefail'
    $DOCKER_CLI || echo 'docker() { podman "$@"; }'
    echo "cd \"\$(cat '$WORK/cwd')\""
    for b in "$@"; do
      text="$(block "$b")"
      [ "${#SUBST[@]}" = 0 ] || text="$(sed "${SUBST[@]}" <<<"$text")"
      [ -z "$SKIP_LINES" ] || text="$(grep -v -- "$SKIP_LINES" <<<"$text")"
      printf '%s\n' "$text"
    done
    echo "pwd > '$WORK/cwd'"
  } >"$WORK/blocks.sh"
  log "README blocks: $*"
  TMPDIR="$WORK" bash "$WORK/blocks.sh"
  echo # the blocks' last output (a curl answer) has no line end
}
echo "$ROOT" >"$WORK/cwd"

# The listeners are read whole first: `… | grep -q` under pipefail fails by SIGPIPE when grep stops early.
port_free() {
  local listening
  listening="$(ss -ltnH 2>/dev/null | awk '{print $4}')" || true
  ! grep -qE "[:.]$1\$" <<<"$listening"
}
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
# A README port published on 127.0.0.1 that is taken here: P<port> is the host port the blocks use instead.
publish_port() {
  local q
  if port_free "$1"; then eval "P$1=$1"; else
    q="$(free_port)"
    eval "P$1=$q"
    SUBST+=(-e "s/127\.0\.0\.1:$1\b/127.0.0.1:$q/g")
    log "127.0.0.1:$1 is taken here: the blocks use 127.0.0.1:$q instead"
  fi
}

IMAGES=(oapp-packager oapp-agent oapp-packager-agent)
if $ONLY_PACKAGER_AGENT; then
  SKIP_LINES='^docker build -f Dockerfile\.packager '
  IMAGES=(oapp-agent oapp-packager-agent)
fi
start=$(date +%s)
run_blocks build
SKIP_LINES=
log "images built in $(($(date +%s) - start)) s"
stages="$(podman images -a -q --filter label=org.oapp.stage=build | wc -l)"
[ "$stages" = 0 ] || fail "$stages build-stage images left after the prune"
left="$(podman images -q --filter dangling=true --filter label=org.oapp.stage | wc -l)"
[ "$left" = 0 ] || fail "$left untagged images of ours left after the prune"
working="$(podman ps -a --external --format '{{.Names}}' | grep -c -- '-working-container' || true)"
[ "$working" = 0 ] || fail "$working build containers left (podman ps -a --external)"
log "build stages, untagged images of ours and build containers left: 0 (untagged images in this storage: $(podman images -q --filter dangling=true | wc -l))"
for img in "${IMAGES[@]}"; do
  conf="$(podman image inspect --format '{{.Config.User}} {{json .Config.Cmd}} {{if .Config.Healthcheck}}healthcheck{{end}}' "$img")"
  log "$img: user, cmd: $conf"
  [ "$conf" = 'node ["node","/app/dist/main.js"] healthcheck' ] || fail "$img: expected user node, an absolute CMD and a HEALTHCHECK"
done

smoke_services() { # the Express packager and the agent: the README blocks packager, walkthrough, agent and stop
set +e
podman run --name oapp-smoke-nobootstrap oapp-agent >"$WORK/nb.out" 2>&1
code=$?
set -e
log "agent without a bootstrap: exit $code, $(grep -c '"level":"fatal"' "$WORK/nb.out") fatal line"
[ "$code" = 1 ] && grep -q '"level":"fatal"' "$WORK/nb.out" || fail "the agent without a bootstrap"

# The README publishes 39575, 39576 and 8080 on 127.0.0.1: another host port where one is taken here (checked
# after the build, just before the blocks that publish them).
SUBST=()
for p in 39575 39576 8080; do publish_port "$p"; done
run_blocks packager walkthrough agent

# --- what the README promises -------------------------------------------------------------------------------
for n in oapp-packager oapp-agent; do
  [ "$(podman inspect --format '{{.State.Running}}' "$n")" = true ] || fail "$n is not running"
  uid="$(podman exec "$n" id -u)"
  [ "$uid" = 1000 ] || fail "$n runs as uid $uid"
  podman exec "$n" sh -c 'touch /app/x' 2>/dev/null && fail "$n: the root file system is writable"
  log "$n: running as uid $uid, read-only root"
  # ADR 0128: node runs on jemalloc with background purging (memory given back after a burst).
  maps="$(podman exec "$n" cat /proc/1/maps)" || fail "$n: /proc/1/maps unreadable"
  grep -q 'libjemalloc' <<<"$maps" || fail "$n: jemalloc is not loaded (LD_PRELOAD)"
  log "$n: jemalloc loaded"
done
published="$(ss -ltnH | awk '{print $4}' | grep -E ":($P39575|$P39576|$P8080)\$" | sort | tr '\n' ' ')"
log "listening on the host for the published ports: $published"
for a in $published; do
  case "$a" in 127.0.0.1:*) ;; *) fail "published on $a, not on the loopback only" ;; esac
done
[ "$(podman inspect --format '{{.HostConfig.NetworkMode}}' oapp-packager)" = bridge ] || fail "not on the bridge network"

podman healthcheck run oapp-packager || fail "packager HEALTHCHECK"
health="$(podman inspect --format '{{.State.Health.Status}}' oapp-packager)"
log "packager health check: $health"
[ "$health" = healthy ] || fail "packager health status $health"
podman healthcheck run oapp-agent || fail "agent HEALTHCHECK (GET 127.0.0.1:39576/health in the container)"
health="$(podman inspect --format '{{.State.Health.Status}}' oapp-agent)"
log "agent health check: $health"
[ "$health" = healthy ] || fail "agent health status $health"
# /ready and /metrics of both, through the ports published on the host's loopback.
for svc in "packager $P39575" "agent admin listener $P39576"; do
  port="${svc##* }"
  ready="$(curl -sS -o "$WORK/ready" -w '%{http_code}' "http://127.0.0.1:$port/ready")" || fail "${svc% *} /ready"
  [ "$ready" = 200 ] || fail "${svc% *} /ready answered $ready: $(cat "$WORK/ready")"
  curl -fsS "http://127.0.0.1:$port/metrics" >"$WORK/metrics" || fail "${svc% *} /metrics"
  grep -q '^# TYPE ' "$WORK/metrics" || fail "${svc% *} /metrics is not Prometheus text"
  log "${svc% *} through 127.0.0.1:$port: /ready $ready $(cat "$WORK/ready"), /metrics $(grep -c '^# TYPE ' "$WORK/metrics") metrics"
done

# --- stop: SIGTERM, exit code 0 ------------------------------------------------------------------------------
block stop | grep -v '^docker rm ' >"$WORK/stop.sh"
start=$(date +%s)
(
  $DOCKER_CLI || docker() { podman "$@"; }
  set -euo pipefail
  # shellcheck disable=SC1091
  source "$WORK/stop.sh"
)
took=$(($(date +%s) - start))
for n in oapp-agent oapp-packager; do
  code="$(podman inspect --format '{{.State.ExitCode}}' "$n")"
  last="$(podman logs "$n" 2>/dev/null | tail -n 1)"
  log "$n stopped with exit code $code: $last"
  [ "$code" = 0 ] || fail "$n: unclean stop"
  logs="$(podman logs "$n" 2>/dev/null)" || true
  grep -q '"signal":"SIGTERM"' <<<"$logs" || fail "$n: no SIGTERM in its log"
done
log "docker stop of both took ${took} s"
[ "$took" -lt 10 ] || fail "the stop waited for the kill timeout"
run_blocks stop

# --- another working directory (-w), read-only root ----------------------------------------------------------
DIR="$(cat "$WORK/cwd")"
pw="$(free_port)"
podman run -d --name oapp-smoke-w1 --read-only -w /tmp -p "127.0.0.1:$pw:39575" oapp-packager >/dev/null
curl -fsS --retry 30 --retry-all-errors --retry-delay 1 "http://127.0.0.1:$pw/health" >/dev/null || fail "packager with -w /tmp"
podman healthcheck run oapp-smoke-w1 || fail "packager HEALTHCHECK with -w /tmp"
podman stop oapp-smoke-w1 >/dev/null
pw="$(free_port)"
AGENT_BOOTSTRAP="$(cat "$DIR/container-bootstrap.json")" podman run -d --name oapp-smoke-w2 --read-only -w /tmp \
  -e AGENT_BOOTSTRAP -v "$DIR/config:/config:ro" -p "127.0.0.1:$pw:8080" oapp-agent >/dev/null
reply="$(curl -fsS --retry 30 --retry-all-errors --retry-delay 1 -X POST "http://127.0.0.1:$pw/hello" \
  -H 'Content-Type: application/json' -d '{"name":"w"}')" || fail "agent with -w /tmp"
podman healthcheck run oapp-smoke-w2 || fail "agent HEALTHCHECK with -w /tmp"
podman stop oapp-smoke-w2 >/dev/null
log "with --read-only -w /tmp the packager answered /health, the agent answered $reply; both health checks passed"
[ "$(podman inspect --format '{{.State.ExitCode}}' oapp-smoke-w1) $(podman inspect --format '{{.State.ExitCode}}' oapp-smoke-w2)" = '0 0' ] ||
  fail "unclean stop with -w"

# --- caller tokens (ADR 0140) ------------------------------------------------------------------------------------
# With a token hash record, /workflow-hash needs the token (401 without it, 200 with it), /health stays open and
# the token is in no log line; without records and with PACKAGER_ALLOW_UNAUTHENTICATED=0 the image refuses to start.
token="oappt_$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
record="sha256:$(printf %s "$token" | sha256sum | cut -d' ' -f1) inspect smoke"
wf='{"workflows": [{"name": "hello", "steps": [{"stepId": "hello"}]}]}'
pw="$(free_port)"
podman run -d --name oapp-smoke-t1 --read-only -e PACKAGER_TOKEN_HASHES="$record" -e PACKAGER_ALLOW_UNAUTHENTICATED=0 \
  -p "127.0.0.1:$pw:39575" oapp-packager >/dev/null
curl -fsS --retry 30 --retry-all-errors --retry-delay 1 "http://127.0.0.1:$pw/health" >/dev/null || fail "packager with tokens: /health"
code="$(curl -sS -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$pw/workflow-hash" -H 'Content-Type: application/json' -d "$wf")"
[ "$code" = 401 ] || fail "packager with tokens: no token answered $code"
code="$(curl -sS -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$pw/workflow-hash" -H 'Content-Type: application/json' \
  -H "Authorization: Bearer $token" -d "$wf")"
[ "$code" = 200 ] || fail "packager with tokens: the token answered $code"
podman stop oapp-smoke-t1 >/dev/null
t1logs="$(podman logs oapp-smoke-t1 2>&1)" || true
grep -qF "$token" <<<"$t1logs" && fail "packager with tokens: the token is in its log"
code=0
podman run --name oapp-smoke-t2 -e PACKAGER_ALLOW_UNAUTHENTICATED=0 oapp-packager >"$WORK/t2.out" 2>&1 || code=$?
[ "$code" = 1 ] && grep -q 'not loopback' "$WORK/t2.out" || fail "packager without tokens on 0.0.0.0 and the switch off: exit $code"
log "caller tokens: 401 without, 200 with the token, not logged; no tokens with PACKAGER_ALLOW_UNAUTHENTICATED=0: exit 1"
}

smoke_packager_agent() { # the packager on the agent (ADR 0137): the README blocks packager-agent, packager-agent-stop
  local phase n=oapp-packager-agent uid maps logs listening health answer code took pw
  phase=$(date +%s)
  SUBST=()
  publish_port 39575
  run_blocks packager-agent
  [ "$(podman inspect --format '{{.State.Running}}' $n)" = true ] || fail "$n is not running"
  uid="$(podman exec $n id -u)"
  [ "$uid" = 1000 ] || fail "$n runs as uid $uid"
  podman exec $n sh -c 'touch /app/x' 2>/dev/null && fail "$n: the root file system is writable"
  podman exec $n sh -c 'cat /app/packager/packager.bootstrap.json >/dev/null' || fail "$n: the user node cannot read the bootstrap"
  maps="$(podman exec $n cat /proc/1/maps)" || fail "$n: /proc/1/maps unreadable"
  grep -q 'libjemalloc' <<<"$maps" || fail "$n: jemalloc is not loaded (LD_PRELOAD)"
  log "$n: running as uid $uid, read-only root, jemalloc loaded"
  published="$(ss -ltnH | awk '{print $4}' | grep -E ":$P39575\$" | sort | tr '\n' ' ')"
  log "listening on the host for the published port: $published"
  [ -n "$published" ] || fail "$n: nothing listens on 127.0.0.1:$P39575"
  for a in $published; do
    case "$a" in 127.0.0.1:*) ;; *) fail "published on $a, not on the loopback only" ;; esac
  done
  [ "$(podman inspect --format '{{.HostConfig.NetworkMode}}' $n)" = bridge ] || fail "not on the bridge network"
  # The image's bootstrap binds the API to every interface of the container, as the packager image does.
  logs="$(podman logs $n 2>/dev/null)" || true
  listening="$(grep '"msg":"listening"' <<<"$logs")" || fail "$n: no listening line"
  grep -q '"id":"api","port":39575,"address":"0.0.0.0"' <<<"$listening" || fail "$n: the API is not on 0.0.0.0:39575 inside: $listening"
  podman healthcheck run $n || fail "$n HEALTHCHECK (GET 127.0.0.1:39575/health in the container)"
  health="$(podman inspect --format '{{.State.Health.Status}}' $n)"
  log "$n health check: $health"
  [ "$health" = healthy ] || fail "$n health status $health"
  # A packager operation and a problem answer, through the published port.
  answer="$(curl -fsS -X POST "http://127.0.0.1:$P39575/workflow-hash" -H 'Content-Type: application/json' \
    -d '{"workflows": [{"name": "hello", "steps": [{"stepId": "hello"}]}]}')" || fail "$n: POST /workflow-hash"
  grep -qE '"hash":"[0-9a-f]{64}"' <<<"$answer" || fail "$n: /workflow-hash answered $answer"
  code="$(curl -sS -o "$WORK/problem" -w '%{http_code} %{content_type}' -X POST "http://127.0.0.1:$P39575/workflow-hash" \
    -H 'Content-Type: application/json' -d '{"workflows": [')" || fail "$n: POST /workflow-hash (bad JSON)"
  case "$code" in "400 application/problem+json"*) ;; *) fail "$n: bad JSON answered $code: $(cat "$WORK/problem")" ;; esac
  log "$n: /workflow-hash $answer; bad JSON: $code $(cat "$WORK/problem")"

  block packager-agent-stop | grep -v '^docker rm ' >"$WORK/stop.sh"
  start=$(date +%s)
  (
    $DOCKER_CLI || docker() { podman "$@"; }
    set -euo pipefail
    # shellcheck disable=SC1091
    source "$WORK/stop.sh"
  )
  took=$(($(date +%s) - start))
  code="$(podman inspect --format '{{.State.ExitCode}}' $n)"
  logs="$(podman logs $n 2>/dev/null)" || true
  log "$n stopped with exit code $code in $took s: $(tail -n 1 <<<"$logs")"
  [ "$code" = 0 ] || fail "$n: unclean stop"
  grep -q '"signal":"SIGTERM"' <<<"$logs" || fail "$n: no SIGTERM in its log"
  [ "$took" -lt 10 ] || fail "the stop waited for the kill timeout"
  run_blocks packager-agent-stop

  pw="$(free_port)"
  podman run -d --name oapp-smoke-w3 --read-only -w /tmp -p "127.0.0.1:$pw:39575" $n >/dev/null
  curl -fsS --retry 30 --retry-all-errors --retry-delay 1 "http://127.0.0.1:$pw/health" >/dev/null || fail "$n with -w /tmp"
  podman healthcheck run oapp-smoke-w3 || fail "$n HEALTHCHECK with -w /tmp"
  podman stop -t 10 oapp-smoke-w3 >/dev/null
  [ "$(podman inspect --format '{{.State.ExitCode}}' oapp-smoke-w3)" = 0 ] || fail "$n: unclean stop with -w"
  log "with --read-only -w /tmp $n answered /health and passed its health check"
  log "the packager on the agent: $(($(date +%s) - phase)) s after the build"
}

$ONLY_PACKAGER_AGENT || smoke_services
smoke_packager_agent
log "took $(elapsed)"
log "OK"
