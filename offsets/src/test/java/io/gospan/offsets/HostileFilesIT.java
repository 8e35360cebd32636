package io.gospan.offsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.elf.NotRegularFileException;
import java.io.ByteArrayOutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.zip.Deflater;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile files: special files given as a binary are refused before they are opened (a FIFO would block
 * the open forever), and every compressed-section header cut short is a {@link CorruptBinaryException}
 * naming the section, never a runtime exception.
 */
class HostileFilesIT {

  @TempDir Path dir;

  @Test
  void aFifoIsRefusedWithoutBlocking() throws Exception {
    Path fifo = dir.resolve("pipe");
    Process p = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
    assertThat(p.waitFor()).isZero();
    assertTimeoutPreemptively(Duration.ofSeconds(1), () -> {
      assertThatThrownBy(() -> ElfFile.open(fifo)).isInstanceOf(NotRegularFileException.class)
          .hasMessage("not a regular file: " + fifo + " (fifo)");
      assertThatThrownBy(() -> GoBinary.open(fifo)).isInstanceOf(NotRegularFileException.class)
          .hasMessageContaining("(fifo)");
    });
  }

  @Test
  void aDirectoryADeviceAndASocketAreRefused() throws Exception {
    assertThatThrownBy(() -> ElfFile.open(dir)).isInstanceOf(NotRegularFileException.class)
        .hasMessage("not a regular file: " + dir + " (directory)");
    assertTimeoutPreemptively(Duration.ofSeconds(1), () -> {
      assertThatThrownBy(() -> ElfFile.open(Path.of("/dev/zero"))).isInstanceOf(NotRegularFileException.class)
          .hasMessage("not a regular file: /dev/zero (character device)");
    });
    Path sock = dir.resolve("s.sock");
    try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      s.bind(UnixDomainSocketAddress.of(sock));
      assertThatThrownBy(() -> ElfFile.open(sock)).isInstanceOf(NotRegularFileException.class)
          .hasMessageEndingWith("(socket)");
    }
  }

  @Test
  void aSymlinkToARegularFileIsFollowed() throws Exception {
    Path f = dir.resolve("f");
    Files.write(f, new byte[] {1, 2, 3});
    Path link = Files.createSymbolicLink(dir.resolve("link"), f);
    ElfFile.requireRegularFile(link);
    assertThatThrownBy(() -> ElfFile.open(link)).isInstanceOf(NotElfException.class);
  }

  @Test
  void aZdebugSectionShorterThanItsHeaderIsCorrupt() throws Exception {
    for (int n = 0; n < 12; n++) {
      byte[] framed = Arrays.copyOf(zlibFramed(new byte[] {1, 2, 3}), n);
      if (n >= 4) {
        System.arraycopy("ZLIB".getBytes(), 0, framed, 0, 4);
      }
      ElfFile elf = ElfFile.of(Path.of("short"), new SyntheticElf().section(".zdebug_info", framed).build());
      assertThatThrownBy(() -> elf.debugSection("info")).as("%d bytes", n)
          .isInstanceOf(CorruptBinaryException.class)
          .hasMessageContaining(".zdebug_info")
          .hasMessageContaining("truncated");
    }
  }

  @Test
  void aZdebugStreamCutShortIsCorrupt() throws Exception {
    byte[] framed = zlibFramed(new byte[4096]);
    ElfFile elf = ElfFile.of(Path.of("cut"),
        new SyntheticElf().section(".zdebug_info", Arrays.copyOf(framed, 14)).build());
    assertThatThrownBy(() -> elf.debugSection("info")).isInstanceOf(CorruptBinaryException.class)
        .hasMessageContaining(".zdebug_info");
    ElfFile whole = ElfFile.of(Path.of("whole"), new SyntheticElf().section(".zdebug_info", framed).build());
    assertThat(whole.debugSection("info")).get().extracting(ByteBuffer::remaining).isEqualTo(4096);
  }

  @Test
  void anShfCompressedSectionShorterThanItsChdrIsCorrupt() throws Exception {
    for (int n = 0; n < 24; n++) {
      ElfFile elf = ElfFile.of(Path.of("chdr"), new SyntheticElf().section(".debug_info", new byte[n], 0x800).build());
      assertThatThrownBy(() -> elf.debugSection("info")).as("%d bytes", n)
          .isInstanceOf(CorruptBinaryException.class)
          .hasMessageContaining(".debug_info")
          .hasMessageContaining("truncated");
    }
  }

  private static byte[] zlibFramed(byte[] data) {
    Deflater d = new Deflater();
    d.setInput(data);
    d.finish();
    byte[] buf = new byte[data.length + 64];
    int n = d.deflate(buf);
    d.end();
    ByteArrayOutputStream z = new ByteArrayOutputStream();
    z.writeBytes("ZLIB".getBytes());
    z.writeBytes(ByteBuffer.allocate(8).order(ByteOrder.BIG_ENDIAN).putLong(data.length).array());
    z.write(buf, 0, n);
    return z.toByteArray();
  }
}
