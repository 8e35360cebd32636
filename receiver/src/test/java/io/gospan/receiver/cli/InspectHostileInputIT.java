package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.gospan.offsets.resolve.Preference;
import io.gospan.receiver.discovery.BinaryInspection;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gospan inspect} on hostile input: a binary whose build info carries terminal escape sequences,
 * a bidi override, a C1 control and an invalid UTF-8 byte prints only printable characters (the escaped
 * form); a FIFO and a device are refused at once with one line (a directory is walked: InspectDirectoryTest).
 */
class InspectHostileInputIT {

  @TempDir Path tmp;

  static InspectReportTest.Result inspect(String target) {
    return InspectReportTest.inspect(target, InspectCommand.Output.TEXT);
  }

  /** Only printable ASCII and newlines: what the examples' build info escapes to. */
  static void assertPrintable(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      assertThat(c == '\n' || (c >= 0x20 && c < 0x7f))
          .as("character U+%04X at %d of:\n%s", (int) c, i, text).isTrue();
    }
  }

  @Test
  void controlBytesInModuleVersionsArePrintedEscaped() throws Exception {
    byte[] bin = Files.readAllBytes(ExampleApps.build().resolve("greeter-server"));
    // ESC [ 2 J (clear screen) + U+202E RIGHT-TO-LEFT OVERRIDE: 7 bytes, as long as "v1.85.0" or any vX.YY.Z
    int grpc = patchVersions(bin, "\tgoogle.golang.org/grpc\t", new byte[] {0x1b, '[', '2', 'J', (byte) 0xe2, (byte) 0x80, (byte) 0xae});
    // U+009B (C1 CSI), an invalid byte, BEL, DEL
    int xnet = patchVersions(bin, "\tgolang.org/x/net\t", new byte[] {'v', (byte) 0xc2, (byte) 0x9b, (byte) 0xff, 0x07, 0x7f});
    assertThat(grpc).as("build info copies patched").isPositive();
    assertThat(xnet).isPositive();
    Path crafted = tmp.resolve("crafted-server");
    Files.write(crafted, bin);

    InspectReportTest.Result r = inspect(crafted.toString());
    assertPrintable(r.out());
    assertPrintable(r.err());
    assertThat(r.out()).as(r.out()).contains("grpc-go:  \\x1b[2J\\u202e").contains("x/net:    v\\u009b\\ufffd\\x07\\x7f");
    assertThat(r.exit()).as(r.out()).isIn(ExitCodes.OK, ExitCodes.UNSUPPORTED);

    // what discovery logs and exports comes escaped from the inspection itself
    BinaryInspection inspection = BinaryInspection.inspect(crafted, Preference.DWARF);
    assertThat(inspection.grpcVersion()).contains("\\x1b[2J\\u202e");
    assertThat(inspection.grpcVersionOrUnknown()).isEqualTo("\\x1b[2J\\u202e");
    assertThat(inspection.xnetVersion().orElseThrow()).startsWith("v\\u009b\\ufffd\\x07\\x7f");
    inspection.refused().values().forEach(InspectHostileInputIT::assertPrintable);
    inspection.unsupported().ifPresent(InspectHostileInputIT::assertPrintable);
  }

  /**
   * Overwrites the version after each occurrence of {@code "\t<module path>\t"} (a "dep" line of the
   * modinfo string, present in .go.buildinfo and again in the data) with {@code with}, padded with
   * printable bytes to the original length so that every length prefix stays right.
   */
  private static int patchVersions(byte[] bin, String dep, byte[] with) {
    byte[] key = dep.getBytes(StandardCharsets.US_ASCII);
    int n = 0;
    for (int i = indexOf(bin, key, 0); i >= 0; i = indexOf(bin, key, i + 1)) {
      int start = i + key.length;
      int end = start;
      while (bin[end] != '\t' && bin[end] != '\n') {
        end++;
      }
      assertThat(end - start).as("version length").isGreaterThanOrEqualTo(with.length);
      for (int j = start; j < end; j++) {
        bin[j] = j - start < with.length ? with[j - start] : (byte) '0';
      }
      n++;
    }
    return n;
  }

  private static int indexOf(byte[] hay, byte[] needle, int from) {
    outer:
    for (int i = from; i <= hay.length - needle.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  @Test
  void aFifoIsRefusedAtOnce() throws Exception {
    Path fifo = tmp.resolve("pipe");
    ExampleApps.run(List.of("mkfifo", fifo.toString()), 10);
    InspectReportTest.Result r = assertTimeoutPreemptively(Duration.ofSeconds(1), () -> inspect(fifo.toString()));
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err()).isEqualTo("gospan inspect: not a regular file: " + fifo + " (fifo)\n");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void aDeviceIsRefused() {
    InspectReportTest.Result dev = assertTimeoutPreemptively(Duration.ofSeconds(1), () -> inspect("/dev/zero"));
    assertThat(dev.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(dev.err()).contains("not a regular file: /dev/zero (character device)");
  }

  /**
   * As an unprivileged user (nobody, through util-linux setpriv; the ITs run as root, who may read
   * anything), another user's {@code /proc/1/exe} and a file without read permission are "permission
   * denied", not "does not exist". Runs the packaged {@code gospan.jar}, copied where nobody can read it.
   */
  @Test
  void permissionDeniedIsSaidAsSuch() throws Exception {
    Path jar = tmp.resolve("gospan.jar");
    Files.copy(ExampleApps.repoRoot().resolve("receiver/target/gospan.jar"), jar);
    Path unreadable = tmp.resolve("unreadable");
    Files.copy(Path.of("/bin/true"), unreadable);
    Files.setPosixFilePermissions(unreadable, PosixFilePermissions.fromString("--x--x--x"));
    Files.setPosixFilePermissions(jar, PosixFilePermissions.fromString("rw-r--r--"));
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
    String javaExe = ProcessHandle.current().info().command().orElseThrow();
    for (String target : List.of("1", unreadable.toString())) {
      Process p = new ProcessBuilder("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
          javaExe, "-jar", jar.toString(), "inspect", target).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as(out).isEqualTo(ExitCodes.ERROR);
      assertThat(out).as(target).contains("gospan inspect: permission denied reading "
          + (target.equals("1") ? "/proc/1/exe" : target)).doesNotContain("does not exist");
    }
  }

  @Test
  void aMissingFileIsSaidToBeMissing() {
    InspectReportTest.Result r = inspect(tmp.resolve("absent").toString());
    assertThat(r.exit()).isEqualTo(ExitCodes.ERROR);
    assertThat(r.err()).contains("does not exist");
  }
}
