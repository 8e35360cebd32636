package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.testing.DebianPackages;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gospan inspect DIR}, the packaged CLI ({@code java -jar gospan.jar}), as a CI step gating an image would
 * run it: on a directory holding Debian's etcd, etcdctl, containerd, ctr and containerd's shims and the examples'
 * binaries; on the root file system of the examples' container image (Debian bookworm-slim bootstrapped by
 * mmdebstrap, scripts/container-images.sh) with Debian's etcd and containerd packages unpacked into it; and, as an
 * unprivileged user, on a directory with an unreadable file and an unreadable subdirectory. Each verdict is the
 * one {@code inspect PATH} gives the same binary, {@code --output json} parses with Jackson and says what the
 * text says, and the exit code is the gate.
 */
class InspectDirectoryIT {

  @TempDir Path tmp;

  record Cli(int exit, String out, String err) {}

  /** {@code java -jar gospan.jar ARGS} (through {@code prefix}, e.g. setpriv), stdout and stderr apart. */
  private Cli cli(Path jar, List<String> prefix, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(prefix);
    cmd.addAll(List.of(ProcessHandle.current().info().command().orElseThrow(), "-jar", jar.toString()));
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile(tmp, "out", ".txt");
    Path err = Files.createTempFile(tmp, "err", ".txt");
    Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    if (!p.waitFor(300, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(cmd + " did not finish in 300 s");
    }
    Cli c = new Cli(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    Files.delete(out);
    Files.delete(err);
    return c;
  }

  private static Path jar() {
    Path jar = ExampleApps.repoRoot().resolve("receiver/target/gospan.jar");
    assertThat(jar).as("the packaged CLI (mvn package)").isRegularFile();
    return jar;
  }

  /** The text output's verdict lines ({@code PATH: verdict}) by path; the summary left out. */
  private static Map<String, String> verdicts(String out) {
    Map<String, String> v = new LinkedHashMap<>();
    out.lines().filter(l -> !l.startsWith("gospan inspect: ")).forEach(l -> {
      int i = l.indexOf(": ");
      assertThat(i).as(l).isPositive();
      v.put(l.substring(0, i), l.substring(i + 2));
    });
    return v;
  }

  /**
   * Each verdict is what {@code inspect PATH} says of that binary (its "verdict:" line and exit code), and the
   * JSON lines carry the same statuses and verdicts.
   */
  private void assertAgreesWithInspectPathAndJson(Path jar, Path dir, Map<String, String> verdicts) throws Exception {
    for (Map.Entry<String, String> e : verdicts.entrySet()) {
      InspectReportTest.Result one = InspectReportTest.inspect(Path.of(e.getKey()), InspectCommand.Output.TEXT);
      String verdict = InspectReportTest.line(one.out(), "verdict:");
      if (e.getValue().startsWith("traceable: ")) {
        assertThat(one.exit()).as(e.getKey()).isEqualTo(ExitCodes.OK);
        assertThat(e.getValue()).isEqualTo("traceable: " + verdict);
      } else if (e.getValue().startsWith("unsupported: ")) {
        assertThat(one.exit()).as(e.getKey()).isEqualTo(ExitCodes.UNSUPPORTED);
        assertThat(e.getValue()).isEqualTo(verdict);
      } else {
        assertThat(e.getValue()).as(e.getKey()).startsWith("not a Go gRPC binary (go");
        assertThat(one.exit()).as(e.getKey()).isEqualTo(ExitCodes.UNSUPPORTED);
      }
    }
    Cli json = cli(jar, List.of(), "inspect", "--output", "json", dir.toString());
    Map<String, String> fromJson = new LinkedHashMap<>();
    for (String line : json.out().strip().split("\n")) {
      JsonNode d = InspectReportTest.JSON.readTree(line);
      assertThat(d.get("schema_version").asInt()).isEqualTo(1);
      String status = d.get("status").asText();
      String text = d.at("/verdict/text").asText();
      fromJson.put(d.get("binary").asText(), switch (status) {
        case "traceable" -> "traceable: " + text;
        case "unsupported" -> text;
        case "not_grpc" -> "not a Go gRPC binary";
        default -> throw new AssertionError("status " + status + " in " + line);
      });
    }
    assertThat(fromJson.keySet()).containsExactlyElementsOf(verdicts.keySet());
    fromJson.forEach((path, v) -> assertThat(verdicts.get(path)).as(path).startsWith(v));
    assertThat(json.err()).as("the summary, on stderr").startsWith("gospan inspect: " + dir + ": Go gRPC binaries: ");
  }

  @Test
  void debiansEtcdAndContainerdAndTheExamplesPassTheGate() throws Exception {
    Path jar = jar();
    DebianPackages.Unpacked debian = DebianPackages.fetch();
    Path dir = Files.createDirectories(tmp.resolve("bin"));
    try (Stream<Path> s = Files.list(debian.root().resolve("usr/bin"))) {
      for (Path p : s.toList()) {
        Files.copy(p, dir.resolve(p.getFileName().toString()));
      }
    }
    Path examples = ExampleApps.build();
    for (String name : List.of("greeter-server", "greeter-client", "greeter-relay")) {
      Files.copy(examples.resolve(name), dir.resolve(name));
    }
    Cli r = cli(jar, List.of(), "inspect", dir.toString());
    Map<String, String> v = verdicts(r.out());
    assertThat(r.err()).as(r.out()).isEmpty();
    for (String name : List.of("etcd", "containerd", "ctr", "greeter-server", "greeter-relay")) {
      assertThat(v.get(dir.resolve(name).toString())).as(name + "\n" + r.out())
          .startsWith("traceable: client spans, server spans, client->server linking by socket");
    }
    for (String name : List.of("etcdctl", "greeter-client")) {
      assertThat(v.get(dir.resolve(name).toString())).as(name + "\n" + r.out()).startsWith("traceable: client spans");
    }
    // containerd's runc shim speaks ttrpc, not grpc-go: not counted, not failing the gate
    assertThat(v.get(dir.resolve("containerd-shim-runc-v2").toString())).as(r.out())
        .startsWith("not a Go gRPC binary (go1.").endsWith(", grpc-go's HTTP/2 transport not linked)");
    try (Stream<Path> s = Files.list(dir)) {
      assertThat(v.keySet()).as("every file is a Go binary").hasSize(s.toList().size());
    }
    long traceable = v.values().stream().filter(x -> x.startsWith("traceable: ")).count();
    assertThat(traceable).isGreaterThanOrEqualTo(7);
    assertThat(r.out()).contains(": Go gRPC binaries: " + traceable + " traceable, 0 unsupported;");
    assertThat(r.exit()).as(r.out()).isEqualTo(ExitCodes.OK);
    assertAgreesWithInspectPathAndJson(jar, dir, v);
  }

  /**
   * The root file system of the examples' image (Debian bookworm-slim from mmdebstrap, greeter-server and
   * greeter-client in /usr/local/bin), with Debian's etcd and containerd unpacked into it: every Go gRPC binary
   * traceable, Debian's own programs counted, its symbolic links (/bin -> usr/bin, the absolute
   * /etc/alternatives ones) not followed.
   */
  @Test
  void aRootFileSystemWithEtcdAndContainerdPassesTheGate() throws Exception {
    Path jar = jar();
    DebianPackages.Unpacked debian = DebianPackages.fetch();
    String engine = ExampleApps.repoRoot().resolve("scripts/container-engine.sh").toString();
    String image = "docker.io/library/gospan-examples:dev";
    try {
      ExampleApps.run(List.of(engine, "podman", "image", "exists", image), 60);
    } catch (AssertionError e) {
      throw new AssertionError(image + " is not in podman's store: scripts/container-images.sh builds it (scripts/test.sh"
          + " runs it before the tests)", e);
    }
    String id = ExampleApps.run(List.of(engine, "podman", "create", image), 120).strip();
    Path tar = tmp.resolve("rootfs.tar");
    try {
      ExampleApps.run(List.of(engine, "podman", "export", "-o", tar.toString(), id), 300);
    } finally {
      ExampleApps.run(List.of(engine, "podman", "rm", id), 120);
    }
    Path rootfs = Files.createDirectories(tmp.resolve("rootfs"));
    ExampleApps.run(List.of("tar", "-xf", tar.toString(), "-C", rootfs.toString(), "--numeric-owner"), 300);
    Files.delete(tar);
    try (Stream<Path> debs = Files.list(debian.debs())) {
      for (Path deb : debs.toList()) {
        ExampleApps.run(List.of("dpkg", "-x", deb.toString(), rootfs.toString()), 300);
      }
    }
    assertThat(Files.isSymbolicLink(rootfs.resolve("bin"))).as("merged /usr").isTrue();

    Cli r = cli(jar, List.of(), "inspect", rootfs.toString());
    Map<String, String> v = verdicts(r.out());
    assertThat(r.err()).as(r.out()).isEmpty();
    for (String p : List.of("usr/local/bin/greeter-server", "usr/bin/etcd", "usr/bin/containerd", "usr/bin/ctr")) {
      assertThat(v.get(rootfs.resolve(p).toString())).as(p + "\n" + r.out())
          .startsWith("traceable: client spans, server spans, client->server linking by socket");
    }
    for (String p : List.of("usr/local/bin/greeter-client", "usr/bin/etcdctl")) {
      assertThat(v.get(rootfs.resolve(p).toString())).as(p + "\n" + r.out()).startsWith("traceable: client spans");
    }
    assertThat(v.keySet()).allMatch(p -> p.startsWith(rootfs + "/usr/"));
    assertThat(v.keySet()).as("each binary once, not again through /bin").noneMatch(p -> p.startsWith(rootfs + "/bin/"));
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("Go gRPC binaries: (\\d+) traceable, 0 unsupported;.*"
        + " other ELF files: (\\d+) .* not opened: (\\d+) symbolic links").matcher(r.out());
    assertThat(m.find()).as(r.out()).isTrue();
    assertThat(Long.parseLong(m.group(1))).isEqualTo(v.values().stream().filter(x -> x.startsWith("traceable: ")).count())
        .isGreaterThanOrEqualTo(6);
    assertThat(Integer.parseInt(m.group(2))).as("bash, coreutils, apt, ...").isGreaterThan(50);
    assertThat(Integer.parseInt(m.group(3))).isGreaterThan(10);
    assertThat(r.exit()).as(r.out()).isEqualTo(ExitCodes.OK);
    assertAgreesWithInspectPathAndJson(jar, rootfs, v);
  }

  /**
   * As nobody (util-linux setpriv; the ITs run as root, who reads anything): a file and a directory without read
   * permission get one line each on stderr, the rest is inspected, and the gate says exit 1 (a verdict unknown).
   */
  @Test
  void unreadableFilesAreReportedAndSkipped() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("image"));
    Path jar = Files.copy(jar(), tmp.resolve("gospan.jar"));
    Path examples = ExampleApps.build();
    Files.copy(examples.resolve("greeter-client"), dir.resolve("greeter-client"));
    Path secret = Files.copy(examples.resolve("greeter-server"), dir.resolve("secret"));
    Path locked = Files.createDirectories(dir.resolve("locked"));
    Files.copy(examples.resolve("greeter-server"), locked.resolve("greeter-server"));
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("--x--x--x"));
    Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("rwx------"));
    for (Path p : List.of(tmp, dir)) {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    Files.setPosixFilePermissions(jar, PosixFilePermissions.fromString("rw-r--r--"));
    Cli r = cli(jar, List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"), "inspect", dir.toString());
    assertThat(r.err().lines().toList()).as(r.err()).containsExactly(
        "gospan inspect: permission denied reading " + secret, // a directory's files before its subdirectories
        "gospan inspect: permission denied reading directory " + locked);
    assertThat(verdicts(r.out())).as(r.out()).containsOnlyKeys(dir.resolve("greeter-client").toString());
    assertThat(r.out()).contains("unreadable: 2");
    assertThat(r.exit()).isEqualTo(ExitCodes.ERROR);
  }
}
