package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Exec notices as the kernel lays them out ({@code struct exec_notice}): the path's components put in order. */
class ExecNoticeTest {

  static ByteBuffer record(int pid, long dev, long ino, long mntNs, int flags, byte[] path) {
    ByteBuffer b = ByteBuffer.allocate(GrpcLayouts.EXEC_NOTICE.offset("path") + path.length).order(ByteOrder.LITTLE_ENDIAN);
    b.putLong(GrpcLayouts.EXEC_NOTICE.offset("ts_ns"), 77);
    b.putLong(GrpcLayouts.EXEC_NOTICE.offset("exe") + GrpcLayouts.EXE_KEY.offset("dev"), dev);
    b.putLong(GrpcLayouts.EXEC_NOTICE.offset("exe") + GrpcLayouts.EXE_KEY.offset("ino"), ino);
    b.putLong(GrpcLayouts.EXEC_NOTICE.offset("mnt_ns"), mntNs);
    b.putInt(GrpcLayouts.EXEC_NOTICE.offset("pid"), pid);
    b.putShort(GrpcLayouts.EXEC_NOTICE.offset("path_len"), (short) path.length);
    b.put(GrpcLayouts.EXEC_NOTICE.offset("flags"), (byte) flags);
    b.put(GrpcLayouts.EXEC_NOTICE.offset("path"), path);
    return b;
  }

  @Test
  void thePathsComponentsArePutInOrder() {
    ExecNotice n = ExecNotice.decode(record(42, 0xfe00000L, 1234, 4026531841L, 0,
        "etcdctl\0bin\0usr\0".getBytes(StandardCharsets.UTF_8)));
    assertThat(n).isEqualTo(new ExecNotice(42, new ExeKey(0xfe00000L, 1234), 4026531841L, "/usr/bin/etcdctl", 77));
    assertThat(ExecNotice.path("a b\0".getBytes(StandardCharsets.UTF_8))).isEqualTo("/a b");
  }

  @Test
  void aPathTheKernelCouldNotGiveWholeIsNone() {
    byte[] part = "dd\0".getBytes(StandardCharsets.UTF_8);
    assertThat(ExecNotice.decode(record(1, 1, 1, 1, GrpcConstants.EXEC_PATH_TRUNCATED, part)).path()).isNull();
    assertThat(ExecNotice.decode(record(1, 1, 1, 1, GrpcConstants.EXEC_NO_PATH, new byte[0])).path()).isNull();
    assertThat(ExecNotice.path("bin\0\0usr\0".getBytes(StandardCharsets.UTF_8))).as("an empty component").isNull();
    assertThat(ExecNotice.path("bin\0usr".getBytes(StandardCharsets.UTF_8))).as("not terminated").isNull();
    assertThat(ExecNotice.path("a/b\0".getBytes(StandardCharsets.UTF_8))).as("a '/' in a name").isNull();
  }

  @Test
  void aRecordShorterThanItSaysIsRefused() {
    ByteBuffer b = record(1, 1, 1, 1, 0, "x\0".getBytes(StandardCharsets.UTF_8));
    b.putShort(GrpcLayouts.EXEC_NOTICE.offset("path_len"), (short) 100);
    assertThatThrownBy(() -> ExecNotice.decode(b)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ExecNotice.decode(ByteBuffer.allocate(8))).isInstanceOf(IllegalArgumentException.class);
  }
}
