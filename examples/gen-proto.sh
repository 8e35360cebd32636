#!/usr/bin/env bash
# Regenerates greeter/greeterpb from greeter/greeter.proto.
#
# The generators are pinned to OLD versions on purpose: the committed code must
# compile against every grpc-go the examples are built with (>= v1.32, up to
# the newest) and every google.golang.org/protobuf that comes with them
# (>= v1.25). protoc-gen-go v1.26.0 emits code that needs protobuf runtime
# >= v1.20, and protoc-gen-go-grpc v1.1.0 emits SupportPackageIsVersion7 code
# (grpc-go >= v1.32; still accepted by current grpc-go). Newer generators emit
# SupportPackageIsVersion8/9 code, which old grpc-go cannot compile.
#
# Needs protoc on PATH (Debian: apt-get install -y protobuf-compiler) and Go.
set -euo pipefail

PROTOC_GEN_GO_VERSION=v1.26.0
PROTOC_GEN_GO_GRPC_VERSION=v1.1.0

here=$(cd "$(dirname "$0")" && pwd)
tools="$here/bin/tools"
mkdir -p "$tools"

if ! command -v protoc >/dev/null 2>&1; then
    echo "gen-proto.sh: protoc not found; install it with: apt-get install -y protobuf-compiler" >&2
    exit 1
fi

# GOFLAGS from the user's go env file (e.g. -mod=vendor) must not leak into
# 'go install pkg@version'.
export GOFLAGS=-mod=mod
GOBIN="$tools" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
GOBIN="$tools" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"

cd "$here/greeter"
PATH="$tools:$PATH" protoc \
    --go_out=greeterpb --go_opt=paths=source_relative \
    --go-grpc_out=greeterpb --go-grpc_opt=paths=source_relative \
    greeter.proto
echo "generated: $(ls greeterpb/*.go | tr '\n' ' ')"
