package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The class-data-sharing recipe docs/running.md gives for the jar: {@code scripts/cds-archive.sh
 * JAR ARCHIVE} dumps an archive from the repository's class list, and the JVM started with the three
 * options docs/running.md names maps it ({@code -Xshare:on}: the JVM refuses to start rather than
 * run without it) and takes most of the classes it loads from it.
 */
class CdsArchiveIT {

  @Test
  void theDocumentedArchiveMapsAndServesTheClassesOfTheJar() throws Exception {
    Path root = ExampleApps.repoRoot();
    Path jar = root.resolve("receiver/target/gospan.jar");
    assertThat(jar).as("the packaged jar (mvn package)").exists();
    Path dir = Files.createDirectories(root.resolve("receiver/target/cds-archive-it"));
    Path archive = dir.resolve("gospan.jsa");
    Files.deleteIfExists(archive);
    run(List.of("bash", root.resolve("scripts/cds-archive.sh").toString(), jar.toString(), archive.toString()), dir.resolve("dump.out"));
    assertThat(archive).as("the archive cds-archive.sh wrote").exists();

    Path classes = dir.resolve("classes.log");
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Path out = dir.resolve("version.out");
    run(List.of(java.toString(), "-Xshare:on", "-XX:+UnlockDiagnosticVMOptions", "-XX:ArchiveRelocationMode=0",
        "-XX:SharedArchiveFile=" + archive, "-Xlog:class+load=info:file=" + classes, "-jar", jar.toString(), "version"), out);
    assertThat(Files.readString(out)).startsWith("gospan ");
    List<String> loaded = Files.readAllLines(classes).stream().filter(l -> l.contains(" source: ")).toList();
    long shared = loaded.stream().filter(l -> l.contains("source: shared objects file")).count();
    System.out.printf("CdsArchiveIT: gospan version loaded %d classes, %d from the archive%n", loaded.size(), shared);
    assertThat(shared).as("classes from the archive among the %d `gospan version` loaded", loaded.size())
        .isGreaterThanOrEqualTo((long) (0.9 * loaded.size()));
  }

  /** Runs {@code cmd}, its output to {@code out}; fails with that output unless it exits 0 within 120 s. */
  private static void run(List<String> cmd, Path out) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    boolean done = p.waitFor(120, TimeUnit.SECONDS);
    if (!done) {
      p.destroyForcibly();
    }
    assertThat(done && p.exitValue() == 0).as("%s exits 0 within 120 s; its output:%n%s", cmd,
        new String(Files.readAllBytes(out), StandardCharsets.UTF_8)).isTrue();
  }
}
