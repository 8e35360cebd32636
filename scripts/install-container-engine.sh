#!/usr/bin/env bash
# Installs the container engine the container images, the docker-compose demo and the container
# tests (ComposeIT) use, from Debian's packages, as root; only what is missing. scripts/test.sh
# runs it; safe to run by hand. It writes no configuration: the project's podman settings live in
# the project's cache (scripts/container-engine.sh, CONTAINERS_CONF), so a host's own podman or
# Docker set-up is left as it was.
#
#   podman 4.3 + runc + conmon   the engine (daemonless; `podman system service` serves the
#                                Docker API to docker-compose and testcontainers while they run)
#   netavark + aardvark-dns      container networks with DNS (compose services find each other
#                                by name); iptables, which netavark programs for them
#   docker-compose 1.29          Debian's Compose v1, which implements `pid: "service:X"` and
#                                `network_mode: "service:X"` (Debian's podman-compose 1.0.3 drops
#                                the first and passes the second through unchanged)
#   mmdebstrap                   bootstraps the debian:bookworm base images from Debian's
#                                packages where no image registry can be reached
#                                (scripts/container-images.sh)
#
# Not installed: Docker's engine (docker.io): dockerd sets the iptables FORWARD policy to DROP,
# which cuts off the network namespaces the link tests route between (docs/containers.md). Nor
# recommends: docker-compose recommends docker.io.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "install-container-engine: run as root (apt-get install, and loading BPF in the containers, need it)" >&2
  exit 1
fi

packages=(podman runc conmon netavark aardvark-dns iptables docker-compose mmdebstrap curl)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-container-engine: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
