package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.testing.ExampleApps;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gospan inspect DIR}: one line per Go binary, everything else counted; symbolic links are not followed
 * (out of the directory, in a cycle, to a directory), a FIFO and a socket are never opened, a file without the
 * ELF magic is not inspected, a corrupt ELF file gets one line on stderr and the walk goes on; the exit code is
 * the gate: 0 when every Go gRPC binary is traceable, 3 when one is not, 1 when something could not be read.
 * (An unreadable file as an unprivileged user: {@code InspectDirectoryIT}.)
 */
class InspectDirectoryTest {

  @TempDir Path tmp;

  /** The {@code go} command on PATH: a Go binary that does not link grpc-go. */
  static Path goTool() throws Exception {
    for (String dir : System.getenv("PATH").split(":")) {
      Path go = Path.of(dir, "go");
      if (Files.isExecutable(go)) {
        return go.toRealPath();
      }
    }
    throw new AssertionError("no go on PATH (scripts/install-deps.sh installs it): the test needs a Go binary without grpc-go");
  }

  /** Output lines that are no summary. */
  private static List<String> verdicts(String out) {
    return out.lines().filter(l -> !l.startsWith("gospan inspect: ")).toList();
  }

  @Test
  void oneLinePerGoBinaryNoLinkFollowedNothingSpecialOpened() throws Exception {
    Path examples = ExampleApps.build();
    Path root = Files.createDirectories(tmp.resolve("root"));
    Path bin = Files.createDirectories(root.resolve("usr/bin"));
    Files.copy(examples.resolve("greeter-server"), bin.resolve("greeter-server"));
    Files.copy(goTool(), bin.resolve("go"));
    Files.copy(Path.of("/bin/true"), bin.resolve("true"));
    Files.writeString(bin.resolve("script"), "#!/bin/sh\necho hello\n");
    Files.write(bin.resolve("short"), new byte[] {0x7f, 'E', 'L'});
    byte[] server = Files.readAllBytes(examples.resolve("greeter-server"));
    Files.write(bin.resolve("truncated"), Arrays.copyOf(server, 64 << 10)); // its section headers cut off
    // links: out of the directory to a traceable binary, inside it, a cycle, a directory cycle, dangling
    Files.createSymbolicLink(bin.resolve("client-outside"), examples.resolve("greeter-client"));
    Files.createSymbolicLink(bin.resolve("server-link"), Path.of("greeter-server"));
    Files.createSymbolicLink(bin.resolve("a"), Path.of("b"));
    Files.createSymbolicLink(bin.resolve("b"), Path.of("a"));
    Files.createSymbolicLink(root.resolve("usr/loop"), Path.of(".."));
    Files.createSymbolicLink(root.resolve("bin"), Path.of("usr/bin"));
    Files.createSymbolicLink(root.resolve("outside"), examples);
    // special files: never opened (a FIFO's open would block)
    Process mkfifo = new ProcessBuilder("mkfifo", bin.resolve("pipe").toString()).inheritIO().start();
    assertThat(mkfifo.waitFor()).isZero();
    try (ServerSocketChannel socket = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      socket.bind(UnixDomainSocketAddress.of(bin.resolve("socket")));

      InspectReportTest.Result r = assertTimeoutPreemptively(Duration.ofSeconds(120),
          () -> InspectReportTest.inspect(root, InspectCommand.Output.TEXT));
      assertThat(verdicts(r.out())).as(r.out()).hasSize(2);
      assertThat(verdicts(r.out()).get(0)).matches(Pattern.quote(bin.resolve("go") + ": not a Go gRPC binary (go1.") + ".*\\)");
      assertThat(verdicts(r.out()).get(1)).startsWith(bin.resolve("greeter-server")
          + ": traceable: client spans, server spans, client->server linking by socket");
      assertThat(r.err()).as("one line for the corrupt file").matches("gospan inspect: corrupt ELF file "
          + Pattern.quote(bin.resolve("truncated").toString()) + ": [^\n]+\n");
      assertThat(r.out()).doesNotContain("greeter-client").doesNotContain("examples");
      assertThat(r.out().lines().reduce((x, y) -> y).orElseThrow()).isEqualTo("gospan inspect: " + root + ": Go gRPC binaries: 1 traceable,"
          + " 0 unsupported; Go binaries without grpc-go: 1; other ELF files: 1 (0 for another architecture); other files: 2;"
          + " not opened: 7 symbolic links, 2 special files, 0 directories on other file systems; unreadable: 1");
      assertThat(r.exit()).as("nothing unsupported, one file unreadable").isEqualTo(ExitCodes.ERROR);

      Files.delete(bin.resolve("truncated"));
      InspectReportTest.Result clean = InspectReportTest.inspect(root, InspectCommand.Output.TEXT);
      assertThat(clean.err()).isEmpty();
      assertThat(clean.exit()).as(clean.out()).isEqualTo(ExitCodes.OK);
    }
  }

  /**
   * The gate fails on a Go gRPC binary gospan cannot trace: the stripped example server with the functions that
   * start its client and server spans (and its ServeHTTP paths) renamed in its pclntab, so that gospan finds
   * grpc-go's transport but none of the functions a span needs.
   */
  @Test
  void anUntraceableGoGrpcBinaryFailsTheGate() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("image"));
    byte[] server = Files.readAllBytes(ExampleApps.build("--stripped").resolve("greeter-server"));
    int renamed = 0;
    for (String f : List.of("google.golang.org/grpc/internal/transport.(*http2Client).NewStream",
        "google.golang.org/grpc/internal/transport.(*http2Client).operateHeaders",
        "google.golang.org/grpc/internal/transport.(*http2Server).operateHeaders",
        "golang.org/x/net/http2.(*serverConn).processHeaders",
        "net/http.(*http2serverConn).processHeaders")) {
      renamed += rename(server, f);
    }
    assertThat(renamed).isGreaterThanOrEqualTo(3);
    Files.write(dir.resolve("untraceable-server"), server);
    Files.copy(ExampleApps.build().resolve("greeter-client"), dir.resolve("greeter-client"));

    InspectReportTest.Result r = InspectReportTest.inspect(dir, InspectCommand.Output.TEXT);
    assertThat(r.exit()).as(r.out()).isEqualTo(ExitCodes.UNSUPPORTED);
    assertThat(verdicts(r.out())).hasSize(2);
    assertThat(verdicts(r.out()).get(0)).startsWith(dir.resolve("greeter-client") + ": traceable: client spans");
    assertThat(verdicts(r.out()).get(1)).startsWith(dir.resolve("untraceable-server")
        + ": unsupported: gospan will produce no span for this binary");
    // the same verdict as `inspect PATH` (and `gospan run`: the same BinaryInspection)
    InspectReportTest.Result one = InspectReportTest.inspect(dir.resolve("untraceable-server"), InspectCommand.Output.TEXT);
    assertThat(one.exit()).isEqualTo(ExitCodes.UNSUPPORTED);
    assertThat(verdicts(r.out()).get(1)).endsWith(": " + InspectReportTest.line(one.out(), "verdict:"));
    assertThat(r.out()).contains(": Go gRPC binaries: 1 traceable, 1 unsupported;");

    // JSON: one document per line, the same verdicts; the summary on stderr
    InspectReportTest.Result json = InspectReportTest.inspect(dir, InspectCommand.Output.JSON);
    assertThat(json.exit()).isEqualTo(ExitCodes.UNSUPPORTED);
    Map<String, String> status = new LinkedHashMap<>();
    for (String line : json.out().strip().split("\n")) {
      JsonNode d = InspectReportTest.JSON.readTree(line);
      status.put(d.get("binary").asText(), d.get("status").asText() + ": " + d.at("/verdict/text").asText());
    }
    assertThat(status).containsExactly(
        Map.entry(dir.resolve("greeter-client").toString(), "traceable: " + verdicts(r.out()).get(0).split(": traceable: ", 2)[1]),
        Map.entry(dir.resolve("untraceable-server").toString(), "unsupported: " + verdicts(r.out()).get(1).split(": ", 2)[1]));
    assertThat(json.err()).startsWith("gospan inspect: " + dir + ": Go gRPC binaries: 1 traceable, 1 unsupported;");
  }

  /** Renames every NUL-terminated copy of the function name {@code f} (its last byte changed); how many. */
  private static int rename(byte[] bin, String f) {
    byte[] key = (f + "\0").getBytes(StandardCharsets.US_ASCII);
    int n = 0;
    outer:
    for (int i = 0; i <= bin.length - key.length; i++) {
      for (int j = 0; j < key.length; j++) {
        if (bin[i + j] != key[j]) {
          continue outer;
        }
      }
      bin[i + key.length - 2] = 'Z';
      n++;
    }
    return n;
  }

  /**
   * {@code /dev}: devices ({@code /dev/zero} would stream forever, {@code /dev/kmsg} block) are never opened, and
   * the file systems mounted under it ({@code /dev/shm}, {@code /dev/pts}) are not entered.
   */
  @Test
  void devicesAreNotOpenedAndOtherFileSystemsNotEntered() throws Exception {
    Path dev = Path.of("/dev");
    assertThat(Files.getAttribute(Path.of("/dev/shm"), "unix:dev")).as("/dev/shm is a file system of its own (tmpfs)")
        .isNotEqualTo(Files.getAttribute(dev, "unix:dev"));
    InspectReportTest.Result r = assertTimeoutPreemptively(Duration.ofSeconds(60),
        () -> InspectReportTest.inspect(dev, InspectCommand.Output.TEXT));
    assertThat(verdicts(r.out())).as(r.out()).isEmpty();
    Matcher m = Pattern.compile("Go gRPC binaries: 0 traceable, 0 unsupported; .* other files: 0; not opened: \\d+ symbolic"
        + " links, (\\d+) special files, (\\d+) directories on other file systems; unreadable: 0").matcher(r.out());
    assertThat(m.find()).as(r.out()).isTrue();
    assertThat(Integer.parseInt(m.group(1))).as("null, zero, random, tty, ...").isGreaterThan(5);
    assertThat(Integer.parseInt(m.group(2))).as("/dev/shm at least").isPositive();
    assertThat(r.exit()).isEqualTo(ExitCodes.OK);
  }

  @Test
  void theArgumentMayBeALinkToTheDirectory() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("d"));
    Files.copy(goTool(), dir.resolve("go"));
    Path link = Files.createSymbolicLink(tmp.resolve("link"), dir);
    InspectReportTest.Result r = InspectReportTest.inspect(link, InspectCommand.Output.TEXT);
    assertThat(r.exit()).isEqualTo(ExitCodes.OK);
    assertThat(verdicts(r.out())).singleElement().asString().startsWith(link.resolve("go") + ": not a Go gRPC binary");
  }

}
