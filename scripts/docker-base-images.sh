#!/usr/bin/env bash
# Builds the base images that the Dockerfile (python:3.11-slim) and docker-compose.yml
# (postgres:16) name, from Debian's packages, for machines that reach Debian's and PyPI's
# package servers but no image registry. An image whose tag already exists is kept (a real one
# pulled from a registry, or a stand-in from an earlier run), so a second run takes a second.
#
#   pgs-standin/debian:bookworm  debootstrap --variant=minbase bookworm, imported with `docker import`
#   python:3.11-slim             + Debian's python3 (3.11), pip and venv; the host's pip.conf and
#                                CA bundle, so that pip in `docker build` reaches the index as here
#   postgres:16                  + Debian's postgresql-15 and an entrypoint honouring
#                                POSTGRES_DB/USER/PASSWORD and PGDATA (see postgres-entrypoint.sh)
#
# Needs root (debootstrap), a running dockerd and debootstrap (apt-get install debootstrap).
# The builds use the host's network (--network host): RUN steps reach the package servers the
# way the host does, even where a container network has no route out.
set -euo pipefail
here="$(cd "$(dirname "$0")/docker-base-images" && pwd)"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

have() { docker image inspect "$1" >/dev/null 2>&1; }

build_debian() {
    have pgs-standin/debian:bookworm && return
    local root="$work/rootfs"
    echo "debootstrap bookworm (minbase) from $mirror" >&2
    debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
    rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
    tar -C "$root" -c . | docker import -c 'ENV LANG=C.UTF-8' -c 'CMD ["bash"]' - pgs-standin/debian:bookworm >/dev/null
}

build_python() {
    have python:3.11-slim && return
    local ctx="$work/python"
    mkdir "$ctx"
    cp "$here/python.Dockerfile" "$ctx/Dockerfile"
    # Only the system-wide pip.conf: a user's file may point at directories the image lacks.
    if [ -f /etc/pip.conf ]; then cp /etc/pip.conf "$ctx/pip.conf"; else : > "$ctx/pip.conf"; fi
    cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca-certificates.crt"
    docker build --network host -q -t python:3.11-slim "$ctx" >/dev/null
}

build_postgres() {
    have postgres:16 && return
    docker build --network host -q -t postgres:16 -f "$here/postgres.Dockerfile" "$here" >/dev/null
}

for image in python:3.11-slim postgres:16; do
    have "$image" && echo "$image: present, kept" >&2
done
build_debian
build_python
build_postgres
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E '^(python:3.11-slim|postgres:16|pgs-standin/debian:bookworm) ' >&2
