package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class KubeletMountsTest {
  static final String UID = "6f1c2b3a-9d8e-4c7b-a6f5-e4d3c2b1a098";

  /** mountinfo lines of a pod's container under containerd: the kubelet's files among the runtime's. */
  static List<String> container(String kubeletRoot, String uid, String name) {
    return List.of(
        "1201 1133 0:190 / / rw,relatime master:412 - overlay overlay rw,lowerdir=/var/lib/containerd/a/fs,upperdir=/var/lib/containerd/b/fs",
        "1202 1201 0:193 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw",
        "1210 1201 254:0 " + kubeletRoot + "/pods/" + uid + "/etc-hosts /etc/hosts rw,relatime - ext4 /dev/vda rw",
        "1211 1201 254:0 " + kubeletRoot + "/pods/" + uid + "/containers/" + name + "/4b2f09c1 /dev/termination-log rw,relatime - ext4 /dev/vda rw",
        "1212 1201 254:0 /run/containerd/io.containerd.grpc.v1.cri/sandboxes/0a1b/hostname /etc/hostname rw - ext4 /dev/vda rw",
        "1213 1201 0:180 / /var/run/secrets/kubernetes.io/serviceaccount ro,relatime - tmpfs tmpfs rw,size=1024k");
  }

  @Test
  void podUidAndContainerNameFromTheTerminationMessageFile() {
    assertThat(KubeletMounts.parse(container("/var/lib/kubelet", UID, "greeter-server")))
        .isEqualTo(new KubeletMounts(UID, "greeter-server"));
    // the kubelet's directory on a file system of its own: the root is relative to it
    assertThat(KubeletMounts.parse(container("", UID, "app-2"))).isEqualTo(new KubeletMounts(UID, "app-2"));
    // a static pod's uid is the hash of its manifest
    String hash = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
    assertThat(KubeletMounts.parse(container("/data/kubelet", hash, "etcd"))).isEqualTo(new KubeletMounts(hash, "etcd"));
  }

  @Test
  void podUidAloneFromTheHostsFileOrAVolume() {
    // terminationMessagePath: "" -> no container file
    List<String> lines = container("/var/lib/kubelet", UID, "x").stream().filter(l -> !l.contains("termination-log")).toList();
    assertThat(KubeletMounts.parse(lines)).isEqualTo(new KubeletMounts(UID, null));
    assertThat(KubeletMounts.parse(List.of(
        "88 77 254:0 /var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~configmap/cfg/..data /etc/cfg ro - ext4 /dev/vda rw")))
        .isEqualTo(new KubeletMounts(UID, null));
  }

  @Test
  void noPodOutsideKubernetesOrWhenTwoPodsAreNamed() {
    assertThat(KubeletMounts.parse(List.of(
        "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
        "23 22 0:21 / /proc rw - proc proc rw",
        // a docker container's files, and look-alikes that are not the kubelet's
        "24 22 254:0 /var/lib/docker/containers/3f4e/hosts /etc/hosts rw - ext4 /dev/vda rw",
        "25 22 254:0 /srv/pods/not-a-uid/containers/x/4b2f09c1 /x rw - ext4 /dev/vda rw",
        "26 22 254:0 /srv/pods/" + UID + "/containers/Upper_Case/4b2f09c1 /y rw - ext4 /dev/vda rw")))
        .isEqualTo(KubeletMounts.NONE);
    assertThat(KubeletMounts.parse(List.of())).isEqualTo(KubeletMounts.NONE);
    assertThat(KubeletMounts.parse(List.of("garbage", ""))).isEqualTo(KubeletMounts.NONE);
    // a host path volume showing another pod's directory
    String other = "11111111-2222-4333-8444-555555555555";
    List<String> both = new java.util.ArrayList<>(container("/var/lib/kubelet", UID, "app"));
    both.add("99 1201 254:0 /var/lib/kubelet/pods/" + other + "/volumes/kubernetes.io~empty-dir/shared /shared rw - ext4 /dev/vda rw");
    assertThat(KubeletMounts.parse(both)).isEqualTo(KubeletMounts.NONE);
  }
}
