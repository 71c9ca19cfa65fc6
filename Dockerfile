# abiscope as a container image: FROM scratch, about 8 MB.
#
#   docker build -t abiscope .                      # for this machine
#   docker buildx build --platform linux/amd64,linux/arm64 -t abiscope .
#   podman build -t abiscope .
#   docker run --rm -v /:/host:ro abiscope check --root /host /opt/venv
#
# The binary is the one `make wheel` puts in the manylinux_2_17 wheel: zlib,
# jansson, libzip and libstdc++'s demangler linked in, glibc not.  It cannot
# be a fully static one: the driver probe (abiscope gpu, and check without
# --assume-driver) dlopen()s the libcuda.so.1 that the NVIDIA container
# toolkit puts into the container, and a library is loaded only by a dynamic
# loader and the glibc it was linked against, never into a static program.
# So the image holds the binary, the dynamic loader and the glibc libraries
# it and libcuda.so.1 need (libc, libdl, libm, libpthread, librt; from
# Debian 12's libc6, glibc 2.36), busybox (Debian's busybox-static) for the
# `sh -c` of the Kubernetes manifests and a CI job's script, and the
# licenses (/usr/share/doc).  Nothing else: no Python, no package manager.
#
# The build stage runs on the build machine and cross-compiles with zig for
# the target (no emulation for --platform linux/arm64); the target's libc6
# and busybox-static are opened from their .debs, not installed.  It needs
# Debian's archive and PyPI (zig), as make wheel does.

ARG DEBIAN=docker.io/library/debian:bookworm-slim

FROM --platform=$BUILDPLATFORM ${DEBIAN} AS build
ARG TARGETARCH
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        build-essential cmake dpkg-dev python3-venv busybox-static \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# the target: TARGETARCH (amd64, arm64) where the builder sets it, else this machine
RUN set -eu; \
    debarch=${TARGETARCH:-$(dpkg --print-architecture)}; \
    case $debarch in amd64) arch=x86_64 ;; arm64) arch=aarch64 ;; *) echo "no abiscope for $debarch" >&2; exit 1 ;; esac; \
    WHEEL_ARCHES=$arch WHEEL_BUILD=/build sh mk/wheel.sh; \
    img=/image; \
    mkdir -p $img/usr/bin $img/usr/lib $img/usr/share/doc/abiscope $img/etc $img/tmp $img/host $img/out; \
    chmod 1777 $img/tmp; \
    cp /build/$arch/obj/abiscope/abiscope $img/usr/bin/abiscope; \
    cp LICENSE THIRD-PARTY-NOTICES $img/usr/share/doc/abiscope/; \
    for f in /build/src/zlib-*/debian/copyright /build/src/jansson-*/debian/copyright /build/src/libzip-*/debian/copyright; do \
        n=${f#/build/src/}; cp "$f" "$img/usr/share/doc/abiscope/${n%%-*}.copyright"; done; \
    cp /usr/share/doc/libstdc++-*-dev/copyright $img/usr/share/doc/abiscope/libstdc++.copyright; \
    # the target's libc6 and busybox-static, from their .debs
    [ "$debarch" = "$(dpkg --print-architecture)" ] || dpkg --add-architecture "$debarch"; \
    apt-get update; \
    mkdir -p /debs /pkg && cd /debs && apt-get download "libc6:$debarch" "busybox-static:$debarch"; \
    for d in /debs/*.deb; do dpkg-deb -x "$d" /pkg; \
        dpkg-deb -f "$d" Package Version Source | tr '\n' ' ' >>$img/usr/share/doc/abiscope/debian-packages; \
        echo >>$img/usr/share/doc/abiscope/debian-packages; done; \
    triple=$arch-linux-gnu; \
    mkdir -p $img/usr/lib/$triple; \
    for l in ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 libc.so.6 libdl.so.2 libm.so.6 libpthread.so.0 librt.so.1; do \
        [ ! -e /pkg/lib/$triple/$l ] || cp -P /pkg/lib/$triple/$l $img/usr/lib/$triple/; done; \
    # the merged /usr of Debian 12: /lib and /bin are links; the loader where PT_INTERP names it
    ln -s usr/lib $img/lib; ln -s usr/bin $img/bin; \
    case $arch in \
    x86_64) mkdir -p $img/usr/lib64; ln -s ../lib/$triple/ld-linux-x86-64.so.2 $img/usr/lib64/ld-linux-x86-64.so.2; \
            ln -s usr/lib64 $img/lib64 ;; \
    aarch64) ln -s $triple/ld-linux-aarch64.so.1 $img/usr/lib/ld-linux-aarch64.so.1 ;; \
    esac; \
    mkdir -p $img/usr/share/doc/libc6 $img/usr/share/doc/busybox-static; \
    cp /pkg/usr/share/doc/libc6/copyright $img/usr/share/doc/libc6/; \
    cp /pkg/usr/share/doc/busybox-static/copyright $img/usr/share/doc/busybox-static/; \
    cp /pkg/bin/busybox $img/usr/bin/busybox; \
    # its applets, as the build machine's busybox of the same version lists them
    for a in $(busybox --list); do [ -e "$img/usr/bin/$a" ] || ln -s busybox "$img/usr/bin/$a"; done; \
    echo "root:x:0:0:root:/tmp:/bin/sh" >$img/etc/passwd; \
    echo "root:x:0:" >$img/etc/group; \
    rm -rf /var/lib/apt/lists/*

FROM scratch
COPY --from=build /image/ /
ENV PATH=/usr/bin
ENTRYPOINT ["/usr/bin/abiscope"]
CMD ["--help"]
