#!/usr/bin/env bash
# A real single-node Kubernetes v1.31 on this machine, for running examples/k8s/ (KubernetesIT)
# and for trying the manifests by hand. Everything it starts is private to it and `down` removes
# every trace of it from the host.
#
#   scripts/k8s-cluster.sh install     install the Debian packages it needs (containerd, runc,
#                                      containernetworking-plugins, conntrack, ...) if missing; a
#                                      containerd service the package enables is disabled again.
#                                      podman (the images, the pause image) comes from
#                                      scripts/install-container-engine.sh
#   scripts/k8s-cluster.sh build       build (once; cached) the binaries and the pause image
#   scripts/k8s-cluster.sh up          build, then start the cluster; last stdout line: KUBECONFIG=...
#   scripts/k8s-cluster.sh import REF...  copy images from podman's store into the cluster's
#                                      containerd, under the names Kubernetes resolves REF to
#   scripts/k8s-cluster.sh env         print `export KUBECONFIG=... PATH=...` for a running cluster
#   scripts/k8s-cluster.sh kubectl ARGS...  kubectl against the running cluster
#   scripts/k8s-cluster.sh down        delete every pod, stop everything, remove what it made,
#                                      then `check`
#   scripts/k8s-cluster.sh check       fail (exit 1, one line per leftover) if anything of a
#                                      cluster is left: processes, mounts, network interfaces,
#                                      nftables tables, directories, cgroups, changed sysctls
#
# What runs (all as root, on this host, no registry):
# - etcd 3.5.17 (127.0.0.1:22379) and kube-apiserver, kube-controller-manager, kube-scheduler,
#   kubelet, kube-proxy, kubectl v1.31.4, built from the Go module proxy (k8s.io/kubernetes is
#   not `go install`able: the build pins its staging modules to their published v0.31.4);
#   CoreDNS 1.11.3 (kubernetes plugin only) for the cluster's DNS (Service kube-system/kube-dns).
#   Cached under $GOSPAN_CACHE/k8s (about 4 minutes of 2 idle cores the first time).
# - Debian's containerd 1.6 with the CRI plugin on a private socket, root and state under
#   $GOSPAN_K8S_ROOT (default /var/lib/gospan-k8s); runc; the CNI bridge plugin on bridge
#   gospank8s0 with pods in 10.213.0.0/24 (host-local IPAM, its state in the root too);
#   Services in 10.214.0.0/24; kube-proxy in nftables mode (its own tables, removed by down).
# - The sandbox ("pause") image is a 20-line static C program built here into an image.
# - Authentication: one bearer token (system:masters) for kubectl and every component; RBAC.
#
# Ports: the API on 127.0.0.1:26443, etcd 127.0.0.1:22379-22380, the components' health and
# metrics ports on 127.0.0.1 (10248, 10249, 10256, 10257, 10259); on the node's address the
# kubelet (10250) and CoreDNS (1053, behind the kube-dns Service's port 53).
#
# The kubelet sets kernel tunables (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops)
# when it starts; `up` records them and `down` puts the recorded values back. The kubelet puts
# its device-plugin socket in /var/lib/kubelet whatever its --root-dir; `down` removes it.
#
# Environment: GOSPAN_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/gospan), GOSPAN_K8S_ROOT,
# GOSPAN_K8S_NODE (node name, default gospan-k8s), GOSPAN_K8S_NODE_IP (default: the source
# address of the default route).
set -euo pipefail

k8s_version=v1.31.4
etcd_version=v3.5.17
coredns_version=v1.11.3
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${GOSPAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gospan}/k8s
bin=$cache/$k8s_version/bin
etcd_bin=$cache/etcd-$etcd_version/etcd
coredns_bin=$cache/coredns-$coredns_version/coredns
pause_tar=$cache/pause.tar
pause_image=localhost/gospan-k8s-pause:1

root=${GOSPAN_K8S_ROOT:-/var/lib/gospan-k8s}
# down removes it whole: an absolute path two levels deep at least, of its own
[[ $root == /?*/?* && $root != *..* ]] || { echo "k8s-cluster: GOSPAN_K8S_ROOT=$root: not a directory of its own" >&2; exit 1; }
# What `up` saw of the host before it started, for `down` and `check`; outside $root, which
# `down` removes first. ($before.links: the pods' interfaces, listed by down.)
before=/run/gospan-k8s.before
node=${GOSPAN_K8S_NODE:-gospan-k8s}
bridge=gospank8s0
pod_cidr=10.213.0.0/24
service_cidr=10.214.0.0/24
dns_ip=10.214.0.10
api_port=26443
etcd_port=22379
dns_port=1053
sock=$root/containerd/containerd.sock
kubeconfig=$root/admin.kubeconfig
# Kernel settings the kubelet (container_manager_linux.go, setupKernelTunables) and the CNI
# bridge plugin (IP forwarding) change; restored by down.
sysctls=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys
         kernel.keys.root_maxbytes net.ipv4.ip_forward net.ipv4.conf.all.route_localnet)
# Host paths the cluster creates outside $root whatever their flags say (the kubelet:
# /var/log/containers, /var/lib/kubelet/device-plugins/kubelet.sock; containerd's shims:
# /run/containerd/s; the CNI library's cache: /var/lib/cni), and the components' defaults, should
# a flag be lost. (Not /run/netns, /etc/cni: podman's too.)
host_paths=(/run/containerd /var/log/containers /var/log/pods /var/lib/kubelet /var/lib/containerd /var/lib/cni
            /var/lib/etcd /opt/containerd /etc/kubernetes)

note() { echo "k8s-cluster: $*" >&2; }
# The project's podman (its settings, its image store: scripts/container-images.sh builds there)
podman() { "$here/scripts/container-engine.sh" podman "$@"; }
die() { note "$*"; exit 1; }
need_root() { [[ $(id -u) -eq 0 ]] || die "run as root"; }

# ---------------------------------------------------------------------------------------------
# install

packages=(containerd runc containernetworking-plugins conntrack nftables iproute2 gcc libc6-dev openssl curl)

install_packages() {
    need_root
    local missing=() p
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [[ ${#missing[@]} -eq 0 ]] && return
    note "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
    # Debian's containerd package enables (and, under systemd, starts) a system containerd on
    # /run/containerd: this cluster uses a private one, so a service nobody asked for is
    # stopped and disabled again.
    if [[ " ${missing[*]} " == *" containerd "* ]] && command -v systemctl >/dev/null; then
        if [[ -d /run/systemd/system ]]; then # systemd is the init system
            systemctl disable --now containerd.service >&2
        else
            systemctl disable containerd.service >&2
        fi
        note "stopped and disabled the containerd.service Debian's package enabled (this cluster runs its own)"
    fi
}

# ---------------------------------------------------------------------------------------------
# build

go_env() {
    command -v go >/dev/null 2>&1 || die "go is not on PATH (scripts/install-deps.sh installs it)"
    export GOTOOLCHAIN=auto GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false"
}

build_kubernetes() {
    local cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl) c ok=1
    for c in "${cmds[@]}"; do [[ -x $bin/$c ]] || ok=0; done
    [[ $ok == 1 ]] && return
    go_env
    local dir src=$cache/$k8s_version/src
    note "downloading k8s.io/kubernetes@$k8s_version"
    dir=$(cd /tmp && GOFLAGS= go mod download -json "k8s.io/kubernetes@$k8s_version" \
        | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
    [[ -n "$dir" && -f "$dir/go.mod" ]] || die "go mod download k8s.io/kubernetes@$k8s_version gave no directory"
    rm -rf "$src"
    mkdir -p "$(dirname "$src")"
    cp -r "$dir" "$src"
    chmod -R u+w "$src"
    # The module is built as it is published, with one change: its staging modules
    # (k8s.io/api, client-go, ...) are required as v0.0.0 and replaced by ./staging/...
    # directories the module zip has, but vendor/ and go.work would pin; drop vendor/ and the
    # workspace, drop the replace block, and require the published v0.<minor>.<patch> of each.
    rm -rf "$src/vendor" "$src/go.work" "$src/go.work.sum"
    sed -i -e '/^replace (/,/^)/d' \
        -e 's#^\([[:space:]]*k8s\.io/[a-z0-9./-]*\) v0\.0\.0$#\1 v0'"${k8s_version#v1}"'#' "$src/go.mod"
    if grep -q ' v0\.0\.0$' "$src/go.mod"; then
        die "go.mod still requires v0.0.0 modules: $(grep ' v0\.0\.0$' "$src/go.mod" | tr -s ' \t' ' ')"
    fi
    local v=k8s.io/component-base/version cv=k8s.io/client-go/pkg/version minor=${k8s_version#v1.}
    minor=${minor%%.*}
    local ldflags="-s -w"
    for p in $v $cv; do
        ldflags+=" -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    done
    note "building ${cmds[*]} $k8s_version (about 4 minutes of 2 cores)"
    local pkgs=() t0=$SECONDS
    for c in "${cmds[@]}"; do pkgs+=("./cmd/$c"); done
    mkdir -p "$bin.tmp"
    (cd "$src" && go build -trimpath -ldflags "$ldflags" -o "$bin.tmp/" "${pkgs[@]}") >&2 \
        || die "building Kubernetes $k8s_version failed"
    rm -rf "$bin"
    mv "$bin.tmp" "$bin"
    note "built Kubernetes in $((SECONDS - t0)) s: $bin"
}

# A main module around another module's main function: etcd's etcdmain.Main, CoreDNS's
# coremain.Run with only the plugins this cluster uses.
build_wrapper() { # name module@version main.go-text output
    local name=$1 req=$2 main=$3 out=$4 w
    w=$(dirname "$out")/src
    # cached while the wrapper is the same
    [[ -x $out && -f $w/main.go && "$(cat "$w/main.go")" == "$main" ]] && return
    go_env
    rm -rf "$w"
    mkdir -p "$w"
    printf 'module gospan.local/%s\n\ngo 1.22\n\nrequire %s\n' "$name" "${req/@/ }" >"$w/go.mod"
    printf '%s\n' "$main" >"$w/main.go"
    note "building $name ($req)"
    local t0=$SECONDS
    (cd "$w" && go mod tidy && go build -trimpath -ldflags "-s -w" -o "$out.tmp" .) >&2 || die "building $name failed"
    mv "$out.tmp" "$out"
    note "built $name in $((SECONDS - t0)) s: $out"
}

build_etcd() {
    build_wrapper etcd "go.etcd.io/etcd/server/v3@$etcd_version" 'package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }' "$etcd_bin"
}

build_coredns() {
    build_wrapper coredns "github.com/coredns/coredns@$coredns_version" 'package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	"github.com/coredns/coredns/coremain"
)

// The plugins a Corefile may use, in the order they handle a query (CoreDNS plugin.cfg).
func init() { dnsserver.Directives = []string{"bind", "errors", "cache", "kubernetes"} }

func main() { coremain.Run() }' "$coredns_bin"
}

# The sandbox ("pause") image: a static program that reaps its children and waits for a signal,
# what registry.k8s.io/pause does; saved as an archive `ctr images import` reads.
build_pause() {
    [[ -s $pause_tar ]] && return
    command -v podman >/dev/null || die "podman is needed to build the pause image (scripts/install-container-engine.sh)"
    local w
    w=$(mktemp -d)
    cat >"$w/pause.c" <<'EOF'
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void stop(int sig) { _exit(0); }
static void reap(int sig) { while (waitpid(-1, NULL, WNOHANG) > 0) {} }
int main(void) {
  struct sigaction s = {.sa_handler = stop};
  sigaction(SIGINT, &s, NULL);
  sigaction(SIGTERM, &s, NULL);
  s.sa_handler = reap;
  s.sa_flags = SA_NOCLDSTOP;
  sigaction(SIGCHLD, &s, NULL);
  for (;;) pause();
}
EOF
    gcc -Os -static -o "$w/pause" "$w/pause.c" || die "building pause failed"
    printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"$w/Containerfile"
    podman build -q -t "$pause_image" "$w" >&2 || die "podman build of the pause image failed"
    mkdir -p "$cache"
    podman save -o "$pause_tar.tmp" "$pause_image" >&2 || die "podman save $pause_image failed"
    podman rmi "$pause_image" >/dev/null 2>&1 || true
    mv "$pause_tar.tmp" "$pause_tar"
    rm -rf "$w"
}

build_all() {
    mkdir -p "$cache"
    exec 8>"$cache/.lock"
    flock 8
    build_kubernetes
    build_etcd
    build_coredns
    build_pause
    exec 8>&-
}

# ---------------------------------------------------------------------------------------------
# up

node_ip() {
    if [[ -n ${GOSPAN_K8S_NODE_IP:-} ]]; then
        echo "$GOSPAN_K8S_NODE_IP"
        return
    fi
    ip -4 route get 192.0.2.255 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p' | head -1
}

token() { cat "$root/token"; }

kubectl() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }

# start NAME CMD...: in its own session (so it outlives this script), output to logs/NAME.log
start() {
    local name=$1
    shift
    # Only stdin/stdout/stderr: a descriptor the caller holds (a lock taken with flock(1), the
    # pipe a test reads this script's output from) must not live on in the daemons.
    (
        for fd in /proc/self/fd/*; do
            fd=${fd##*/}
            ((fd > 2)) && eval "exec $fd>&-" 2>/dev/null
        done
        exec setsid "$@" >"$root/logs/$name.log" 2>&1 </dev/null
    ) &
    echo $! >"$root/pids/$name"
}

await() { # seconds what command...
    local timeout=$1 what=$2 t0=$SECONDS
    shift 2
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS - t0 > timeout)); then
            die "$what not within ${timeout} s; logs in $root/logs: $(tail_logs)"
        fi
        sleep 0.5
    done
}

tail_logs() {
    local f
    for f in "$root"/logs/*.log; do
        [[ -f $f ]] && printf '\n== %s\n%s' "$f" "$(tail -n 15 "$f")"
    done
}

alive() {
    local f
    for f in "$root"/pids/*; do
        kill -0 "$(cat "$f")" 2>/dev/null || die "$(basename "$f") exited: $(tail -n 30 "$root/logs/$(basename "$f").log")"
    done
}

pki() {
    local p=$root/pki ip=$1
    mkdir -p "$p"
    (
        cd "$p"
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=gospan-k8s-ca 2>/dev/null
        openssl genrsa -out sa.key 2048 2>/dev/null
        # cert NAME SUBJECT EXTENSIONS
        cert() {
            openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
            printf '%s\n' "$3" >"$1.ext"
            openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out "$1.crt" \
                -extfile "$1.ext" 2>/dev/null
        }
        cert apiserver /CN=kube-apiserver \
            "subjectAltName=IP:127.0.0.1,IP:$ip,IP:${service_cidr%.0/24}.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
        cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth"
        cert kubelet "/CN=$node" "subjectAltName=IP:$ip,DNS:$node"
    )
    head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$root/token"
    printf '%s,admin,admin,system:masters\n' "$(token)" >"$p/tokens.csv"
    cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: gospan-k8s
  cluster: {server: "https://127.0.0.1:$api_port", certificate-authority: "$p/ca.crt"}
users:
- name: admin
  user: {token: "$(token)"}
contexts:
- name: gospan-k8s
  context: {cluster: gospan-k8s, user: admin, namespace: default}
current-context: gospan-k8s
EOF
}

# What `up` saw before it started: kube-proxy's and the CNI plugins' chains (KUBE-*, CNI-*) in
# any table, the host paths above, the sysctls above.
record_host() {
    {
        echo "# chains"
        our_chains
        echo "# paths"
        local p
        for p in "${host_paths[@]}" /sys/fs/cgroup/*/k8s.io; do [[ -e $p ]] && echo "$p"; done
        echo "# sysctl"
        for p in "${sysctls[@]}"; do echo "$p=$(sysctl -n "$p")"; done
    } >"$before"
}

our_chains() { nft list ruleset 2>/dev/null | sed -n 's/^[[:space:]]*chain \(\(KUBE\|CNI\)-[^ ]*\) {.*/\1/p' | sort; }

section() { sed -n "/^# $2\$/,/^# /p" "$1" | grep -v '^# '; }

up() {
    need_root
    local c
    for c in containerd ctr containerd-shim-runc-v2 runc conntrack nft ip openssl gcc; do
        command -v "$c" >/dev/null || die "$c is missing: scripts/k8s-cluster.sh install"
    done
    command -v podman >/dev/null || die "podman is missing: scripts/install-container-engine.sh"
    [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] \
        || die "CNI plugins missing in /usr/lib/cni: scripts/k8s-cluster.sh install"
    if [[ -e $root || -e $before ]]; then
        die "$root or $before exists: a cluster is up (or was not taken down): scripts/k8s-cluster.sh down"
    fi
    build_all
    local ip
    ip=$(node_ip)
    [[ -n $ip && $ip != 127.* ]] || die "no non-loopback IPv4 address for the node (set GOSPAN_K8S_NODE_IP)"
    record_host
    mkdir -p "$root"/{logs,pids,etcd,containerd,kubelet,cni/net.d,cni/ipam,log/pods}
    pki "$ip"
    local t0=$SECONDS p=$root/pki

    # containerd: everything under $root; the CRI plugin with the cgroupfs driver, the kubelet's
    # OOM score left alone, network namespaces under its state directory
    cat >"$root/containerd/config.toml" <<EOF
version = 2
root = "$root/containerd/root"
state = "$root/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$root/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$root/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$root/cni/net.d"
    max_conf_num = 1
EOF
    # CNI: a bridge of our own, pods on a private range, no masquerading (the pods only talk to
    # each other and to the node); portmap for hostPort (none of the examples uses one)
    cat >"$root/cni/net.d/10-gospan-k8s.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "gospan-k8s", "plugins": [
  {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$pod_cidr"}]], "routes": [{"dst": "0.0.0.0/0"}],
            "dataDir": "$root/cni/ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
    start containerd containerd --config "$root/containerd/config.toml"
    start etcd "$etcd_bin" --name default --data-dir "$root/etcd" \
        --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
        --listen-peer-urls http://127.0.0.1:22380 --initial-advertise-peer-urls http://127.0.0.1:22380 \
        --initial-cluster default=http://127.0.0.1:22380 --log-level warn
    await 30 "containerd's socket" test -S "$sock"
    ctr -a "$sock" -n k8s.io images import "$pause_tar" >/dev/null || die "ctr images import $pause_tar failed"
    await 30 "etcd" curl -sf "http://127.0.0.1:$etcd_port/health"
    start kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
        --bind-address 127.0.0.1 --secure-port "$api_port" \
        --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" --client-ca-file "$p/ca.crt" \
        --token-auth-file "$p/tokens.csv" --authorization-mode RBAC \
        --service-account-issuer https://kubernetes.default.svc.cluster.local \
        --service-account-key-file "$p/sa.key" --service-account-signing-key-file "$p/sa.key" \
        --service-cluster-ip-range "$service_cidr" --allow-privileged=true \
        --endpoint-reconciler-type none --enable-priority-and-fairness=false \
        --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
        --kubelet-preferred-address-types InternalIP --profiling=false
    await 60 "kube-apiserver /readyz" kubectl get --raw /readyz
    start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$kubeconfig" \
        --bind-address 127.0.0.1 --leader-elect=false --service-account-private-key-file "$p/sa.key" \
        --root-ca-file "$p/ca.crt" --profiling=false
    start kube-scheduler "$bin/kube-scheduler" --kubeconfig "$kubeconfig" --bind-address 127.0.0.1 \
        --leader-elect=false --profiling=false
    cat >"$root/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
tlsCertFile: $p/kubelet.crt
tlsPrivateKeyFile: $p/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $p/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$sock
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
oomScoreAdj: 0
makeIPTablesUtilChains: false
clusterDNS: [$dns_ip]
clusterDomain: cluster.local
podLogsDir: $root/log/pods
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
imageGCHighThresholdPercent: 100
serializeImagePulls: false
EOF
    start kubelet "$bin/kubelet" --config "$root/kubelet/config.yaml" --kubeconfig "$kubeconfig" \
        --root-dir "$root/kubelet" --hostname-override "$node" --node-ip "$ip" --v 1
    cat >"$root/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clusterCIDR: $pod_cidr
hostnameOverride: $node
clientConnection: {kubeconfig: $kubeconfig}
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
nodePortAddresses: [primary]
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
    start kube-proxy "$bin/kube-proxy" --config "$root/kube-proxy.yaml"
    # DNS: CoreDNS on the node, answering for cluster.local from the API, behind the Service
    # kube-dns at the kubelet's clusterDNS address (kube-proxy forwards port 53 to it)
    cat >"$root/Corefile" <<EOF
cluster.local:$dns_port in-addr.arpa:$dns_port ip6.arpa:$dns_port {
    bind $ip
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $kubeconfig gospan-k8s
        pods insecure
    }
    cache 5
}
EOF
    start coredns "$coredns_bin" -conf "$root/Corefile"
    kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system}
spec:
  clusterIP: $dns_ip
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: $dns_port}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: $dns_port}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-node
  namespace: kube-system
  labels: {kubernetes.io/service-name: kube-dns}
addressType: IPv4
endpoints:
- addresses: [$ip]
ports:
- {name: dns, port: $dns_port, protocol: UDP}
- {name: dns-tcp, port: $dns_port, protocol: TCP}
EOF
    await 90 "node $node Ready" node_ready
    await 60 "the default ServiceAccount" kubectl get serviceaccount default
    await 30 "kube-proxy's nftables table" nft list table ip kube-proxy
    alive
    note "up in $((SECONDS - t0)) s (node $node at $ip, API https://127.0.0.1:$api_port)"
    echo "KUBECONFIG=$kubeconfig"
}

node_ready() {
    [[ $(kubectl get node "$node" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]
}

# ---------------------------------------------------------------------------------------------
# import

# Kubernetes resolves an image name as Docker does: no registry means docker.io, no path means
# library/ (gospan:dev is docker.io/library/gospan:dev); podman keeps local builds as
# localhost/NAME. The image goes into containerd under the name the kubelet will ask for, so
# imagePullPolicy IfNotPresent finds it without a registry.
normalize() {
    local ref=$1 first=${1%%/*}
    if [[ $ref != */* ]]; then
        ref=docker.io/library/$ref
    elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
        ref=docker.io/$ref
    fi
    [[ ${ref##*/} == *:* || $ref == *@* ]] || ref=$ref:latest
    echo "$ref"
}

import_images() {
    need_root
    [[ -S $sock ]] || die "no cluster is up ($sock missing)"
    local ref tmp id
    tmp=$(mktemp -d "$root/import.XXXXXX")
    for ref in "$@"; do
        id=$(podman image inspect --format '{{.Id}}' "$ref" 2>/dev/null) || die "podman has no image $ref"
        podman save -q -o "$tmp/image.tar" "$ref" >&2 || die "podman save $ref failed"
        local out imported
        out=$(ctr -a "$sock" -n k8s.io images import --all-platforms "$tmp/image.tar") || die "ctr images import $ref failed"
        imported=$(echo "$out" | sed -n 's/^unpacking \([^ ]*\) .*/\1/p' | head -1)
        [[ -n $imported ]] || die "ctr images import $ref: nothing imported ($out)"
        local want
        want=$(normalize "$ref")
        if [[ $imported != "$want" ]]; then
            ctr -a "$sock" -n k8s.io images tag --force "$imported" "$want" >/dev/null
            ctr -a "$sock" -n k8s.io images rm "$imported" >/dev/null
        fi
        note "imported $ref (podman ${id:0:12}) as $want"
        rm -f "$tmp/image.tar"
    done
    rm -rf "$tmp"
}

# ---------------------------------------------------------------------------------------------
# down

# stop NAME...: SIGTERM to each, up to 10 s for all of them to exit, then SIGKILL
stop() {
    local n f i
    declare -A pids=()
    for n in "$@"; do
        f=$root/pids/$n
        [[ -f $f ]] || continue
        pids[$n]=$(cat "$f")
        rm -f "$f"
    done
    [[ ${#pids[@]} -gt 0 ]] || return 0
    kill -TERM "${pids[@]}" 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do
        kill -0 "${pids[@]}" 2>/dev/null || return 0
        sleep 0.5
    done
    for n in "${!pids[@]}"; do
        if kill -KILL "${pids[$n]}" 2>/dev/null; then note "$n still ran 10 s after SIGTERM: killed"; fi
    done
}

# Processes of this cluster: the components (their command lines name $root or the cache), the
# shims (-address $sock), and every process in a container of our runc root.
our_pids() {
    local p cmd
    for p in /proc/[0-9]*; do
        cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
        if [[ $cmd == *"$root/"* || $cmd == "$bin/"* || $cmd == "$etcd_bin "* || $cmd == "$coredns_bin "* ]]; then
            echo "${p#/proc/}"
        fi
    done
    if [[ -d $root/containerd/runc/k8s.io ]]; then
        local id
        for id in $(runc --root "$root/containerd/runc/k8s.io" list -q 2>/dev/null); do
            runc --root "$root/containerd/runc/k8s.io" ps "$id" 2>/dev/null | awk 'NR>1{print $2}'
        done
    fi
}

down() {
    need_root
    if [[ ! -e $root && ! -e $before ]]; then
        note "no cluster ($root absent)"
        check
        return
    fi
    local t0=$SECONDS
    # the pods' host-side interfaces, for check
    ip -o link show master "$bridge" 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' >>"$before.links" || true
    # 1. Let the kubelet stop every pod the way it does (CNI DEL, volumes unmounted).
    if [[ -f $kubeconfig ]] && kubectl get --raw /readyz >/dev/null 2>&1; then
        # the controllers first, leaving their pods (else the garbage collector deletes the pods
        # with their own grace period, 30 s by default), then the pods with 5 s
        kubectl delete deployments,replicasets,daemonsets,statefulsets,jobs,cronjobs --all --all-namespaces \
            --cascade=orphan --wait=false >/dev/null 2>&1 || true
        kubectl delete pods --all --all-namespaces --grace-period 5 --wait=false >/dev/null 2>&1 || true
        local i left
        for ((i = 0; i < 60; i++)); do
            left=$(kubectl get pods -A -o name 2>/dev/null)
            [[ -z $left ]] && break
            sleep 0.5
        done
        if [[ -n $left ]]; then
            note "pods still there after 30 s, stopped below: $(echo $left)"
        else
            note "pods gone after $((SECONDS - t0)) s"
        fi
    fi
    # 2. The components, node agents first; kube-proxy removes its nftables tables.
    local c
    stop kubelet coredns kube-scheduler kube-controller-manager kube-apiserver kube-proxy
    if [[ -x $bin/kube-proxy && -f $root/kube-proxy.yaml ]]; then
        "$bin/kube-proxy" --cleanup --config "$root/kube-proxy.yaml" >"$root/logs/kube-proxy-cleanup.log" 2>&1 || true
    fi
    stop etcd
    # 3. Containers the kubelet did not stop: kill their tasks, then containerd.
    if [[ -S $sock ]]; then
        local t
        for t in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
            ctr -a "$sock" -n k8s.io tasks kill -s KILL "$t" >/dev/null 2>&1 || true
        done
        sleep 0.5
        for t in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
            ctr -a "$sock" -n k8s.io tasks delete -f "$t" >/dev/null 2>&1 || true
        done
    fi
    stop containerd
    local pids
    for ((i = 0; i < 10; i++)); do
        pids=$(our_pids | grep -vx "$$" || true)
        [[ -z $pids ]] && break
        kill -KILL $pids 2>/dev/null || true
        sleep 0.3
    done
    if [[ -d $root/containerd/runc/k8s.io ]]; then
        for c in $(runc --root "$root/containerd/runc/k8s.io" list -q 2>/dev/null); do
            runc --root "$root/containerd/runc/k8s.io" delete --force "$c" >/dev/null 2>&1 || true
        done
    fi
    # 4. Mounts under $root (overlay root file systems, shm, tmpfs volumes, network namespaces),
    # deepest first.
    local m
    for ((i = 0; i < 5; i++)); do
        m=$(awk -v r="$root" '$5 == r || index($5, r "/") == 1 {print length($5), $5}' /proc/self/mountinfo \
            | sort -rn | cut -d' ' -f2-)
        [[ -z $m ]] && break
        while read -r c; do umount "$c" 2>/dev/null || umount -l "$c" 2>/dev/null || true; done <<<"$m"
    done
    # 5. The network: the bridge (its veths went with the pods' namespaces), anything of
    # kube-proxy's the cleanup missed.
    ip link show "$bridge" >/dev/null 2>&1 && ip link delete "$bridge"
    local fam
    for fam in ip ip6; do nft delete table "$fam" kube-proxy 2>/dev/null || true; done
    # 6. Host state: paths created meanwhile, cgroups of containerd's default parent, sysctls.
    if [[ -f $before ]]; then
        local p
        # created since up, so ours (e.g. the kubelet's device-plugin socket goes to
        # /var/lib/kubelet/device-plugins whatever its --root-dir): sockets, links into $root (the
        # kubelet's /var/log/containers links to its pods' logs, left when the pods are gone from
        # the API before its container garbage collection ran) and then empty directories go; a
        # file would stay and be reported
        for p in "${host_paths[@]}"; do
            if [[ -e $p ]] && ! section "$before" paths | grep -qx "$p"; then
                find "$p" -depth \( -type s -o \( -type l -lname "$root/*" \) -o -type d -empty \) -delete 2>/dev/null || true
            fi
        done
        for p in /sys/fs/cgroup/*/k8s.io; do
            [[ -d $p ]] && ! section "$before" paths | grep -qx "$p" && rmdir_cgroup "$p"
        done
        local kv
        while IFS= read -r kv; do
            [[ $(sysctl -n "${kv%%=*}") == "${kv#*=}" ]] || sysctl -q -w "$kv" >/dev/null
        done < <(section "$before" sysctl)
    fi
    rm -rf "$root"
    note "down in $((SECONDS - t0)) s"
    check
    rm -f "$before" "$before.links"
}

rmdir_cgroup() { # depth first
    local d
    for d in "$1"/*/; do [[ -d $d ]] && rmdir_cgroup "${d%/}"; done
    rmdir "$1" 2>/dev/null || true
}

# ---------------------------------------------------------------------------------------------
# check

check() {
    local bad=() p
    [[ -e $root ]] && bad+=("directory $root")
    local pids
    pids=$(our_pids | grep -vx "$$" || true)
    for p in $pids; do bad+=("process $p: $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-120)"); done
    while read -r p; do [[ -n $p ]] && bad+=("mount $p"); done < <(awk -v r="$root" \
        '$5 == r || index($5, r "/") == 1 || index($4, r "/") == 1 {print $5}' /proc/self/mountinfo)
    ip link show "$bridge" >/dev/null 2>&1 && bad+=("network interface $bridge")
    if [[ -f $before.links ]]; then
        while read -r p; do
            [[ -n $p ]] && ip link show "$p" >/dev/null 2>&1 && bad+=("network interface $p (a pod's)")
        done <"$before.links"
    fi
    nft list tables 2>/dev/null | grep -q ' kube-proxy$' && bad+=("nftables: $(nft list tables | grep ' kube-proxy$' | tr '\n' ' ')")
    if [[ -f $before ]]; then
        while read -r p; do [[ -n $p ]] && bad+=("nftables chain $p (new since up)"); done \
            < <(comm -13 <(section "$before" chains) <(our_chains))
        for p in "${host_paths[@]}" /sys/fs/cgroup/*/k8s.io; do
            [[ -e $p ]] && ! section "$before" paths | grep -qx "$p" && bad+=("path $p (new since up)")
        done
        local kv
        while IFS= read -r kv; do
            [[ $(sysctl -n "${kv%%=*}") == "${kv#*=}" ]] || bad+=("sysctl ${kv%%=*}=$(sysctl -n "${kv%%=*}") (was ${kv#*=})")
        done < <(section "$before" sysctl)
    fi
    if [[ ${#bad[@]} -gt 0 ]]; then
        printf 'k8s-cluster: left on the host: %s\n' "${bad[@]}" >&2
        return 1
    fi
    note "nothing of the cluster is left on the host"
}

# ---------------------------------------------------------------------------------------------

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case "$cmd" in
    install) install_packages ;;
    build) build_all; echo "$bin" ;;
    up) up ;;
    import) import_images "$@" ;;
    env)
        [[ -f $kubeconfig ]] || die "no cluster is up ($kubeconfig missing)"
        echo "export KUBECONFIG=$kubeconfig PATH=$bin:\$PATH"
        ;;
    kubectl)
        [[ -f $kubeconfig ]] || die "no cluster is up ($kubeconfig missing)"
        exec "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"
        ;;
    down) down ;;
    check) check ;;
    -h | --help | help | "") sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) die "unknown command '$cmd' (install | build | up | import | env | kubectl | down | check)" ;;
esac
