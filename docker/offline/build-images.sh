#!/bin/sh
# The four base images that the Dockerfile and docker-compose.yml name, built from Debian's
# packages alone, for a site that cannot pull from Docker Hub (air-gapped, mirror-only):
#
#     docker/offline/build-images.sh            build what is missing or out of date
#     docker/offline/build-images.sh --rebuild  build all four again (the base tree is kept)
#
# 1. A minimal Debian bookworm tree (`debootstrap --variant=minbase`), kept as a tarball in the
#    cache folder, and imported as the image autograder-offline/debian:bookworm.
# 2. From it, images standing in for python:3.11-slim-bookworm, node:22-bookworm-slim,
#    redis:7-bookworm and postgres:16-bookworm, under those tags (docker/offline/*.Dockerfile),
#    so `docker build .` and `docker compose up` find them without pulling anything.
#
# Each stand-in carries a label with a hash of its recipe (its Dockerfile, the files it copies,
# the base image's id): an image whose label matches is kept, so a second run builds nothing.
#
# Settings (environment):
#   DEBIAN_MIRROR        the Debian mirror for debootstrap and apt (default: debootstrap's own);
#                        the images' apt uses the mirror the tree was made from
#   AUTOGRADER_OFFLINE_CACHE   where the tarball is kept (default ~/.cache/autograder-offline)
#   DOCKER_BUILD_NETWORK the network of the builds' RUN steps (default: Docker's default;
#                        `host` where apt reaches the mirror only through the host)
set -eu

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
cache=${AUTOGRADER_OFFLINE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/autograder-offline}
base=autograder-offline/debian:bookworm
rebuild=false
case "${1:-}" in
    --rebuild) rebuild=true ;;
    "") ;;
    *) echo "usage: $0 [--rebuild]" >&2; exit 2 ;;
esac

say() { echo "offline: $*"; }

# 1. The base tree and its image.
tarball=$cache/bookworm-minbase.tar
if [ ! -s "$tarball" ]; then
    mkdir -p "$cache"
    tree=$(mktemp -d "$cache/rootfs.XXXXXX")
    say "debootstrap --variant=minbase bookworm (a minute or two)"
    # shellcheck disable=SC2086 # the mirror is one optional word
    debootstrap --variant=minbase bookworm "$tree" ${DEBIAN_MIRROR:-} >"$cache/debootstrap.log" 2>&1 \
        || { tail -20 "$cache/debootstrap.log" >&2; rm -rf "$tree"; exit 1; }
    # Nothing of the machine that made it: no apt lists, no downloaded packages.
    rm -rf "$tree"/var/lib/apt/lists/* "$tree"/var/cache/apt/archives/*.deb
    tar -C "$tree" --numeric-owner -cf "$tarball.partial" .
    mv "$tarball.partial" "$tarball"
    rm -rf "$tree"
fi
if ! docker image inspect "$base" >/dev/null 2>&1; then
    say "docker import $tarball as $base"
    docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'CMD ["bash"]' "$tarball" "$base" >/dev/null
fi
base_id=$(docker image inspect --format '{{.Id}}' "$base")

# 2. The stand-ins, each under the official tag it replaces.
stand_in() {  # stand_in TAG RECIPE [FILES...]: build TAG from docker/offline/RECIPE.Dockerfile
    tag=$1 recipe=$2
    shift 2
    hash=$(cd "$here" && cat "$recipe.Dockerfile" "$@" | { cat; echo "$base_id"; } \
        | sha256sum | cut -c1-16)
    current=$(docker image inspect --format '{{index .Config.Labels "org.autograder.offline"}}' \
        "$tag" 2>/dev/null || true)
    if [ "$rebuild" = false ] && [ "$current" = "$hash" ]; then
        say "$tag: up to date"
        return
    fi
    say "$tag: building from $recipe.Dockerfile"
    docker build --quiet --pull=false ${DOCKER_BUILD_NETWORK:+--network "$DOCKER_BUILD_NETWORK"} \
        --build-arg BASE_IMAGE="$base" --label "org.autograder.offline=$hash" \
        --file "$here/$recipe.Dockerfile" --tag "$tag" "$here" >/dev/null
}

stand_in python:3.11-slim-bookworm python
stand_in node:22-bookworm-slim node
stand_in redis:7-bookworm redis
stand_in postgres:16-bookworm postgres postgres-entrypoint.sh
