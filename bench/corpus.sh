#!/bin/sh
# Prepares the Linux 6.1 source tree for bench/search.mjs: installs Debian's linux-source-6.1 when its
# tarball is missing, then unpacks it once to bench/.corpus/linux-source-6.1 (gitignored, never committed).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
corpus="$here/.corpus"
tree="$corpus/linux-source-6.1"
tarball=/usr/src/linux-source-6.1.tar.xz

# Debian's tarball ends its top-level .gitignore with "/*" + "!/debian/" (its packaging repo tracks only
# debian/), which would hide the whole tree from any gitignore-aware search. Drop that block so the tree
# behaves like upstream Linux 6.1.
upstream_ignore() {
  sed -i '/^# Debian packaging: ignore everything at the top level/,$d' "$tree/.gitignore"
}

if [ -f "$tree/Makefile" ]; then
  upstream_ignore
  echo "corpus ready: $tree" >&2
  exit 0
fi
if [ ! -f "$tarball" ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get -o DPkg::Lock::Timeout=600 update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y linux-source-6.1
fi
mkdir -p "$corpus"
rm -rf "$tree.partial"
mkdir "$tree.partial"
tar -xJf "$tarball" -C "$tree.partial" --strip-components=1
mv "$tree.partial" "$tree"
upstream_ignore
echo "corpus ready: $tree" >&2
