package io.gospan.receiver.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Debian's own builds of real Go gRPC programs (etcd, etcdctl, containerd, ctr: GOPATH mode,
 * stripped), fetched and unpacked by {@code scripts/fetch-debian-packages.sh} (cached). A machine
 * without apt fails the test with the script's one-line reason.
 */
public final class DebianPackages {
  private DebianPackages() {}

  /** The unpacked packages: {@code root/usr/bin/etcd} etc. */
  public record Unpacked(Path root, Path debs) {
    public Path bin(String name) {
      return root.resolve("usr/bin").resolve(name);
    }

    /**
     * A source package's version in a binary package's {@code Built-Using} field, upstream part only:
     * {@code golang-google-grpc (= 1.33.3-2)} gives {@code 1.33.3}. What Debian says it built with.
     */
    public Optional<String> builtUsing(String binaryPackage, String sourcePackage) {
      try (var s = Files.list(debs)) {
        Path deb = s.filter(p -> p.getFileName().toString().startsWith(binaryPackage + "_")).findFirst().orElse(null);
        if (deb == null) {
          return Optional.empty();
        }
        String field = ExampleApps.run(List.of("dpkg-deb", "-f", deb.toString(), "Built-Using"), 30);
        Matcher m = Pattern.compile("(?:^|[ ,])" + Pattern.quote(sourcePackage) + " \\(= (?:[0-9]+:)?([^-~+ )]+)").matcher(field);
        return m.find() ? Optional.of(m.group(1)) : Optional.empty();
      } catch (IOException e) {
        throw new AssertionError("listing " + debs + ": " + e, e);
      }
    }
  }

  /** Fetches (once) and unpacks etcd-server, etcd-client and containerd. */
  public static Unpacked fetch() {
    Path script = ExampleApps.repoRoot().resolve("scripts/fetch-debian-packages.sh");
    List<String> cmd = new ArrayList<>(List.of(script.toString()));
    String out = ExampleApps.run(cmd, 600);
    String[] lines = out.strip().split("\n");
    Path root = Path.of(lines[lines.length - 1].strip());
    return new Unpacked(root, root.resolveSibling("debs"));
  }
}
