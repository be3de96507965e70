# Podman for machines without a reachable container registry (this project's machines). Source it, do not run
# it:   source scripts/podman-local.sh
# Afterwards the container commands of README.md ("Run in containers") work as written in this shell.
#
# - installs podman, buildah, runc and debootstrap with apt-get when one is missing (needs root);
# - configures podman in its own directory ($PODMAN_LOCAL_DIR, default ~/.local/state/podman-local): runc (crun
#   fails on rlimits and hybrid cgroup v1 here), cgroupfs, overlay storage, ulimits below the host's, and the
#   default bridge network, so `-p 127.0.0.1:HOST:CONTAINER` publishes to the loopback only;
# - builds the base image docker.io/library/node:20-bookworm-slim locally once (debootstrap bookworm minbase, the
#   host's node and npm, the host CA bundle, the uid-1000 user node the official image has), so the Dockerfiles'
#   FROM resolves without a registry;
# - exports CONTAINERS_CONF, CONTAINERS_STORAGE_CONF and BUILDAH_FORMAT=docker (podman's default OCI image
#   format drops HEALTHCHECK), and defines `docker` as a shell function running podman.
# Setup steps already done are skipped.

podman_local_setup() {
  local log='[podman-local]'
  if ! command -v podman >/dev/null || ! command -v buildah >/dev/null || ! command -v runc >/dev/null ||
    ! command -v debootstrap >/dev/null; then
    echo "$log installing podman buildah runc debootstrap" >&2
    apt-get update >&2 && apt-get install -y podman buildah runc debootstrap >&2 || return 1
  fi
  local S="${PODMAN_LOCAL_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/podman-local}"
  mkdir -p "$S" || return 1
  printf '%s\n' '[containers]' 'default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]' \
    '[engine]' 'runtime = "runc"' 'cgroup_manager = "cgroupfs"' 'events_logger = "file"' >"$S/containers.conf"
  printf '%s\n' '[storage]' 'driver = "overlay"' "graphroot = \"$S/storage\"" "runroot = \"$S/run\"" >"$S/storage.conf"
  export CONTAINERS_CONF="$S/containers.conf" CONTAINERS_STORAGE_CONF="$S/storage.conf" BUILDAH_FORMAT=docker

  local base=docker.io/library/node:20-bookworm-slim
  if podman image exists "$base" && podman run --rm --network none "$base" id node >/dev/null 2>&1; then
    return 0
  fi
  local R="$S/basefs"
  if [ ! -x "$R/usr/bin/env" ]; then
    echo "$log debootstrap bookworm (about 30 s)" >&2
    debootstrap --variant=minbase bookworm "$R" >&2 || return 1
  fi
  install -D "$(command -v node)" "$R/usr/local/bin/node" &&
    mkdir -p "$R/usr/local/lib/node_modules" &&
    cp -a "$(npm root -g 2>/dev/null)/npm" "$R/usr/local/lib/node_modules/" &&
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$R/usr/local/bin/npm" &&
    install -D -m 644 "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" \
      "$R/etc/ssl/certs/ca-certificates.crt" || return 1
  grep -q '^node:' "$R/etc/passwd" || chroot "$R" useradd --uid 1000 --create-home --shell /bin/sh node || return 1
  tar -C "$R" -cf "$S/base.tar" . &&
    podman import --change 'CMD ["node"]' \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' "$S/base.tar" "$base" >&2 &&
    rm -f "$S/base.tar"
}

docker() { podman "$@"; }

podman_local_setup
