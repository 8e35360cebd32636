package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which file systems the exec hold marks, from mountinfo lines. */
class ExecHoldTest {
  @Test
  void oneMountPointPerFileSystemOfAMarkedType() {
    List<String> mountinfo = List.of(
        "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
        "23 22 0:5 / /proc rw - proc proc rw",
        "24 22 0:21 / /dev/shm rw shared:2 - tmpfs tmpfs rw",
        "25 22 254:0 /srv /mnt/bind\\040dir rw - ext4 /dev/vda rw",
        "26 22 0:48 / /var/lib/containers/x/merged rw - overlay overlay rw,lowerdir=/a",
        "27 22 0:49 / /home/u/fuse rw - fuse.sshfs u@h: rw",
        "28 22 0:50 / /mnt/odd\\040name rw - xfs /dev/vdb rw");
    assertThat(ExecHold.mountPoints(mountinfo))
        .as("ext4 once (its bind mount is the same file system), tmpfs, overlay, xfs; not proc, not FUSE")
        .containsExactly("/", "/dev/shm", "/var/lib/containers/x/merged", "/mnt/odd name");
  }
}
