#!/usr/bin/env bash
# Fetches Debian's builds of real Go gRPC programs and unpacks them, for the tests that check what
# gospan does with distribution builds (GOPATH mode, stripped: no module versions, no DWARF).
#
#   fetch-debian-packages.sh [PACKAGE...]     default: etcd-server etcd-client containerd
#
# Downloads the packages with `apt-get download` (the machine's apt sources; `apt-get update` is run
# once when the download fails), unpacks them with `dpkg -x` into CACHE/root and prints CACHE/root as
# the last stdout line (the binaries are under usr/bin). CACHE is $GOSPAN_DEBIAN_CACHE/<hash of the
# package list>, default /var/tmp/gospan-debian/...; a second run with the same packages downloads nothing. CACHE/root/versions.txt
# lists "package version" for each. Exit status 1 with one line on stderr saying why when apt-get or
# dpkg is missing or a package cannot be downloaded (not a Debian/Ubuntu machine, no network, unknown
# package).
set -euo pipefail
pkgs=("$@")
[[ ${#pkgs[@]} -gt 0 ]] || pkgs=(etcd-server etcd-client containerd)
cache=${GOSPAN_DEBIAN_CACHE:-/var/tmp/gospan-debian}
fail() { echo "fetch-debian-packages.sh: $*" >&2; exit 1; }
command -v apt-get >/dev/null || fail "no apt-get: Debian's packages (${pkgs[*]}) can only be fetched on a Debian or Ubuntu machine"
command -v dpkg >/dev/null || fail "no dpkg to unpack Debian's packages"
key=$(printf '%s\n' "${pkgs[@]}" | sort | tr '\n' ' ')
cache=$cache/$(echo "$key" | md5sum | cut -c1-12)
root=$cache/root
if [[ -f "$root/.done" && "$(cat "$root/.done")" == "$key" ]]; then
  echo "$root"
  exit 0
fi
mkdir -p "$cache"
debs=$cache/debs
rm -rf "$debs" "$root"
mkdir -p "$debs" "$root"
download() { (cd "$debs" && apt-get -q -o APT::Sandbox::User=root download "${pkgs[@]}") >"$cache/apt.log" 2>&1; }
if ! download; then
  apt-get -q update >>"$cache/apt.log" 2>&1 || true
  download || fail "apt-get download ${pkgs[*]} failed (no Debian apt source, no network, or no such package): $(grep -E '^E:' "$cache/apt.log" | head -1)"
fi
: >"$root/versions.txt"
for d in "$debs"/*.deb; do
  dpkg -x "$d" "$root" || fail "dpkg -x $d failed"
  echo "$(dpkg-deb -f "$d" Package) $(dpkg-deb -f "$d" Version)" >>"$root/versions.txt"
done
echo "$key" >"$root/.done"
echo "$root"
