#!/usr/bin/env bash
# Installs what building and testing gospan needs on a Debian/Ubuntu x86-64 machine, as
# root. Idempotent: only missing packages are installed. Run by scripts/test.sh and
# examples/demo.sh; safe to run by hand.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: run as root (apt-get install, and loading BPF, need it)" >&2
  exit 1
fi

# clang/llvm compile bpf/*.bpf.c; libbpf-dev gives bpf_helpers.h; bpftool generates
# vmlinux.h from the kernel's BTF (and the tests list links/maps with it); libbpf1 is
# the run-time library the Java binding loads; libcapstone-dev brings libcapstone (.so.4 or
# .so.5), the x86-64 decoder the offsets module loads; protobuf-compiler regenerates the
# examples' stubs (examples/gen-proto.sh); openssl makes the examples' TLS certs;
# util-linux's setpriv runs gospan without CAP_SYS_ADMIN in NoPrivilegesIT; iproute2 (ip netns,
# veth) and nftables (a DNAT rule standing in for a Kubernetes ClusterIP) build the network
# namespaces of LinkAcrossNamespacesIT.
packages=(clang llvm libbpf-dev libbpf1 libcapstone-dev libelf-dev bpftool make gcc openssl
          openjdk-17-jdk-headless maven golang-go ca-certificates util-linux iproute2 nftables)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Go: the examples need a go >= 1.21 on PATH, which fetches the exact toolchain go.mod names
# through the module proxy (GOTOOLCHAIN=auto). Debian's golang-go may be older (bookworm:
# 1.19): then use it once to download a current toolchain from the module proxy (module
# golang.org/toolchain) and put that on PATH.
go_minor=$(go env GOVERSION 2>/dev/null | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
if [ -z "$go_minor" ] || [ "$go_minor" -lt 21 ]; then
  toolchain=golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64
  echo "install-deps: go on PATH is older than 1.21; fetching $toolchain through the module proxy"
  dir=$(cd "$(mktemp -d)" && GOFLAGS= go mod download -json "$toolchain" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [ -f "$dir/bin/go" ] || { echo "install-deps: could not fetch $toolchain" >&2; exit 1; }
  # module zips carry no file modes: mark the executables, as the go command does for
  # GOTOOLCHAIN downloads
  chmod a+x "$dir"/bin/* "$dir"/pkg/tool/*/*
  ln -sf "$dir/bin/go" /usr/local/bin/go
  ln -sf "$dir/bin/gofmt" /usr/local/bin/gofmt
  hash -r
fi

# The kernel must offer BTF for CO-RE (vmlinux.h is generated from it).
if [ ! -r /sys/kernel/btf/vmlinux ]; then
  echo "install-deps: /sys/kernel/btf/vmlinux is missing: gospan needs a kernel >= 5.8 built with CONFIG_DEBUG_INFO_BTF" >&2
  exit 1
fi
