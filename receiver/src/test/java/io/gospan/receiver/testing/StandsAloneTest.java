package io.gospan.receiver.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The repository stands alone: no source, script or document points a reader at design notes that
 * are not in it. Facts belong in {@code docs/}.
 */
class StandsAloneTest {
  private static final Pattern OUTSIDE_NOTES = Pattern.compile("DESIGN\\.md|STYLE\\.md|\\.\\./shared/");
  private static final Set<String> TEXT =
      Set.of(".java", ".c", ".h", ".go", ".sh", ".md", ".yaml", ".yml", ".json", ".properties", ".xml", "Makefile", "Dockerfile");

  @Test
  void noFileCitesNotesOutsideTheRepository() throws IOException {
    Path root = ExampleApps.repoRoot();
    List<String> hits = new ArrayList<>();
    try (Stream<Path> files = Files.walk(root)) {
      files
          .filter(Files::isRegularFile)
          .filter(p -> root.relativize(p).toString().split("/").length > 0)
          .filter(p -> {
            String rel = root.relativize(p).toString();
            return !rel.startsWith(".git/") && !rel.contains("/target/") && !rel.startsWith("target/")
                && !rel.contains("/build/") && !rel.startsWith("examples/bin/");
          })
          .filter(p -> TEXT.stream().anyMatch(ext -> p.getFileName().toString().endsWith(ext)))
          .filter(p -> !p.getFileName().toString().equals("StandsAloneTest.java"))
          .forEach(p -> {
            try {
              String text = Files.readString(p, StandardCharsets.UTF_8);
              if (OUTSIDE_NOTES.matcher(text).find()) {
                hits.add(root.relativize(p).toString());
              }
            } catch (IOException | java.io.UncheckedIOException e) {
              // not UTF-8 text: not documentation
            }
          });
    }
    assertThat(hits).as("files citing notes that are not in the repository").isEmpty();
  }
}
