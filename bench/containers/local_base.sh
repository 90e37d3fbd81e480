#!/usr/bin/env bash
# A base image for `fb-extract images --base` on a machine with podman and no image
# registry (docs/containers.md): Debian 12 from Debian's packages (mmdebstrap), with what
# fbkit's base recipe installs, and this machine's pip configuration and CA bundle (so that
# install steps reach PyPI through the machine's proxy). Usage:
#   bench/containers/local_base.sh [NAME:TAG]    (default localhost/fbkit-base:bookworm)
# FBKIT_BASE_PACKAGES adds Debian packages (the system packages a spec's tests import from
# the system's site-packages, e.g. python3-hypothesis python3-pretend).
# Needs: podman, mmdebstrap (apt-get install podman buildah runc mmdebstrap uidmap).
set -euo pipefail
name=${1:-localhost/fbkit-base:bookworm}
if podman image exists "$name"; then echo "$name: present"; exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mmdebstrap --quiet --variant=minbase \
  --include=bash,ca-certificates,git,patch,procps,tar,python3,python3-venv,python3-pip,python3-pytest$(printf ',%s' ${FBKIT_BASE_PACKAGES:-}) \
  bookworm "$work/base.tar"
podman import --change WORKDIR=/testbed --change CMD=/bin/bash "$work/base.tar" "$name-debian" >/dev/null
mkdir -p "$work/ctx"
cert=${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}
cp "$cert" "$work/ctx/ca-certificates.crt"
if [ -f /etc/pip.conf ]; then cp /etc/pip.conf "$work/ctx/pip.conf"; else : > "$work/ctx/pip.conf"; fi
cat > "$work/ctx/Dockerfile" <<DOCKERFILE
FROM $name-debian
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY pip.conf /etc/pip.conf
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1
DOCKERFILE
podman build --quiet --pull=never --network=none -t "$name" "$work/ctx" >/dev/null
podman rmi "$name-debian" >/dev/null
echo "$name: built"
