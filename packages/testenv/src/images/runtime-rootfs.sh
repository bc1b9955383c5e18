#!/bin/sh
# Copies into $1 what the provisioner images run on, and nothing else: the `node` binary, any further
# programs named after $1 (into /usr/local/bin), the shared libraries they link and their loader (read
# from `ldd`, so glibc and musl bases both work), and the CA certificates when the base has them. The
# images' last stage is `FROM scratch` plus this tree.
set -eu
root="$1"
shift
mkdir -p "$root/usr/local/bin" "$root/tmp" "$root/etc/ssl/certs"
chmod 1777 "$root/tmp"
for program in "$(command -v node)" "$@"; do
  cp "$program" "$root/usr/local/bin/"
  for lib in $(ldd "$program" | grep -o '/[^ ]*'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
done
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
fi
