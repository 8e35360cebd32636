package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which PID namespace the probes translate process ids to, read from a {@code /proc/self/ns/pid}-like link. */
class PidNamespaceInumTest {

  @TempDir Path dir;

  Path link(String target) throws Exception {
    Path l = dir.resolve("pid");
    Files.deleteIfExists(l);
    return Files.createSymbolicLink(l, Path.of(target));
  }

  @Test
  void anotherNamespaceIsItsInodeNumber() throws Exception {
    assertThat(GrpcProbes.pidNamespaceInum(link("pid:[4026532871]"))).isEqualTo(4026532871L);
  }

  @Test
  void theInitialNamespaceNeedsNoTranslation() throws Exception {
    assertThat(GrpcProbes.pidNamespaceInum(link("pid:[4026531836]"))).isZero();
  }

  @Test
  void anythingElseIsTheInitialNamespace() throws Exception {
    assertThat(GrpcProbes.pidNamespaceInum(link("net:[4026532871]"))).isZero();
    assertThat(GrpcProbes.pidNamespaceInum(link("pid:[x]"))).isZero();
    assertThat(GrpcProbes.pidNamespaceInum(link("pid:[99999999999]"))).as("wider than an inode number").isZero();
    assertThat(GrpcProbes.pidNamespaceInum(dir.resolve("missing"))).isZero();
  }

  @Test
  void thisProcesssOwnNamespaceIsRead() throws Exception {
    String target = Files.readSymbolicLink(GrpcProbes.OWN_PID_NAMESPACE).toString();
    long expected = Long.parseLong(target.substring(5, target.length() - 1));
    assertThat(GrpcProbes.pidNamespaceInum(GrpcProbes.OWN_PID_NAMESPACE))
        .isEqualTo(expected == GrpcProbes.INITIAL_PID_NAMESPACE ? 0 : expected);
  }
}
