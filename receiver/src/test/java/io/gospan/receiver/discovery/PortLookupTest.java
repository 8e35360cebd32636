package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which processes listen on a port, on a fake procfs: tables per network namespace, fds per process. */
class PortLookupTest {

  @TempDir Path proc;

  static final String TCP_HEADER =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";

  /** A process in network namespace {@code netns} holding the socket inodes {@code sockets}. */
  void process(int pid, String netns, String tcp, String tcp6, long... sockets) throws Exception {
    Path dir = proc.resolve(Integer.toString(pid));
    Files.createDirectories(dir.resolve("ns"));
    Files.createDirectories(dir.resolve("fd"));
    Files.createDirectories(dir.resolve("net"));
    Files.createSymbolicLink(dir.resolve("ns/net"), Path.of(netns));
    Files.createSymbolicLink(dir.resolve("fd/0"), Path.of("/dev/null"));
    for (int i = 0; i < sockets.length; i++) {
      Files.createSymbolicLink(dir.resolve("fd/" + (3 + i)), Path.of("socket:[" + sockets[i] + "]"));
    }
    Files.writeString(dir.resolve("net/tcp"), TCP_HEADER + tcp);
    if (tcp6 != null) {
      Files.writeString(dir.resolve("net/tcp6"), TCP_HEADER + tcp6);
    }
  }

  // 0100007F:C383 = 127.0.0.1:50051, state 0A = listening; 01 = established
  static final String LISTEN_50051 =
      "   0: 0100007F:C383 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7001 1 0 100 0 0 10 0\n";
  static final String ESTABLISHED_50051 =
      "   1: 0100007F:C383 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 7002 1 0 20 4 30 10 -1\n";
  // [::]:8080 listening
  static final String LISTEN6_8080 =
      "   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7003 1 0 100 0 0 10 0\n";

  @Test
  void aProcessListensWhenItHoldsTheListeningSocketOfItsNamespace() throws Exception {
    process(10, "net:[1]", LISTEN_50051 + ESTABLISHED_50051, LISTEN6_8080, 7001, 7003);
    process(11, "net:[1]", LISTEN_50051 + ESTABLISHED_50051, LISTEN6_8080, 7002); // a connection, not the listener
    process(12, "net:[2]", "", null, 7001); // another namespace, where nothing listens
    PortLookup ports = new PortLookup(new ProcFs(proc));

    assertThat(ports.listens(10, 50051)).isTrue();
    assertThat(ports.listens(10, 8080)).as("IPv6").isTrue();
    assertThat(ports.listens(10, 443)).isFalse();
    assertThat(ports.listens(11, 50051)).as("holds a connection on the port, not the listener").isFalse();
    assertThat(ports.listens(12, 50051)).isFalse();
    assertThat(ports.listens(13, 50051)).as("no such process").isFalse();
  }

  @Test
  void aNamespaceTablesAreReadOncePerLookup() throws Exception {
    process(20, "net:[5]", "", null, 7001);
    process(21, "net:[5]", LISTEN_50051, null, 7001);
    PortLookup first = new PortLookup(new ProcFs(proc));
    assertThat(first.listens(20, 50051)).as("namespace 5 read through pid 20: nothing listens").isFalse();
    assertThat(first.listens(21, 50051)).as("the same namespace: its tables are not read again").isFalse();
    assertThat(new PortLookup(new ProcFs(proc)).listens(21, 50051)).as("the next look reads them again").isTrue();
  }
}
