package io.gospan.receiver.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The class list the image's class-data-sharing archive is dumped from
 * ({@code receiver/src/main/cds/gospan.classlist}, {@code scripts/cds-classlist.sh}) is not stale:
 * every class it names still exists on gospan's class path (a class renamed, moved or removed, in
 * gospan or in a dependency it upgraded). A stale list still works — {@code -Xshare:dump} skips
 * what it cannot find, the JVM loads what the archive lacks from the jar — but each such class
 * costs every sidecar its private copy again.
 */
class CdsClassListTest {
  private final Path list = ExampleApps.repoRoot().resolve("receiver/src/main/cds/gospan.classlist");

  @Test
  void everyListedClassExists() throws IOException {
    List<String> missing = new ArrayList<>();
    int classes = 0;
    int gospan = 0;
    for (String line : Files.readAllLines(list)) {
      if (line.isEmpty() || line.startsWith("#") || line.startsWith("@")) {
        continue; // comments; lambda proxies and lambda forms, which the JVM generates
      }
      String name = line.split(" ")[0].replace('/', '.');
      classes++;
      gospan += name.startsWith("io.gospan.") ? 1 : 0;
      try {
        Class.forName(name, false, getClass().getClassLoader());
      } catch (ClassNotFoundException | LinkageError e) {
        missing.add(name);
      }
    }
    assertThat(classes).as("classes in " + list).isGreaterThan(1000);
    assertThat(gospan).as("gospan's own classes in " + list).isGreaterThan(100);
    assertThat(missing).as("classes in " + list + " that no longer exist: run scripts/cds-classlist.sh").isEmpty();
  }

  @Test
  void listsTheMainClass() throws IOException {
    assertThat(Files.readAllLines(list)).as(list.toString()).anyMatch(l -> l.split(" ")[0].equals("io/gospan/receiver/cli/Main"));
  }
}
