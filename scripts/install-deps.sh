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
# the run-time library the Java binding loads; protobuf-compiler regenerates the
# examples' stubs (examples/gen-proto.sh); openssl makes the examples' TLS certs.
packages=(clang llvm libbpf-dev libbpf1 libelf-dev bpftool make gcc openssl
          openjdk-17-jdk-headless maven golang-go ca-certificates)
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

# The kernel must offer BTF for CO-RE (vmlinux.h is generated from it).
if [ ! -r /sys/kernel/btf/vmlinux ]; then
  echo "install-deps: /sys/kernel/btf/vmlinux is missing: gospan needs a kernel >= 5.8 built with CONFIG_DEBUG_INFO_BTF" >&2
  exit 1
fi
