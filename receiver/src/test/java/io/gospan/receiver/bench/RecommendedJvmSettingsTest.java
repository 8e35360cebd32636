package io.gospan.receiver.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.gospan.receiver.testing.ExampleApps;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The sidecar's JVM settings are the ones docs/benchmarks.md measured, in every place that runs
 * it: {@link LoadBenchmark#JVM} and {@link LoadBenchmark#ENV}, {@code receiver/Dockerfile}'s
 * {@code ENTRYPOINT} (with {@link LoadBenchmark#IMAGE_CDS}) and {@code ENV}, the README's recommended command line; the Kubernetes
 * example and docker-compose.yml keep the image's entry point (no {@code command} or {@code
 * entrypoint} of their own, no other {@code MALLOC_ARENA_MAX}). {@code RecommendedJvmSettingsIT}
 * checks that this JDK accepts them.
 */
class RecommendedJvmSettingsTest {
  private final Path root = ExampleApps.repoRoot();

  @Test
  void dockerfileRunsTheMeasuredSettings() throws IOException {
    String df = Files.readString(root.resolve("receiver/Dockerfile"));
    String runtime = df.substring(df.lastIndexOf("\nFROM "));
    Matcher entry = Pattern.compile("ENTRYPOINT \\[\"java\", (.*), \"-jar\", \"/opt/gospan/gospan.jar\"\\]").matcher(runtime);
    assertThat(entry.find()).as("the runtime stage's ENTRYPOINT runs java -jar gospan.jar").isTrue();
    List<String> options = new ArrayList<>();
    Matcher word = Pattern.compile("\"([^\"]+)\"").matcher(entry.group(1));
    while (word.find()) {
      options.add(word.group(1));
    }
    List<String> expected = new ArrayList<>(LoadBenchmark.JVM);
    expected.addAll(LoadBenchmark.IMAGE_CDS);
    assertThat(options).as("Dockerfile ENTRYPOINT options").isEqualTo(expected);
    assertThat(runtime).as("the runtime stage dumps the archive the ENTRYPOINT maps")
        .contains("-Xshare:dump").contains("-XX:SharedArchiveFile=/opt/gospan/gospan.jsa");
    for (Map.Entry<String, String> e : LoadBenchmark.ENV.entrySet()) {
      assertThat(runtime).as("Dockerfile runtime ENV").containsPattern("(?m)^ENV " + e.getKey() + "=" + e.getValue() + "$");
    }
  }

  @Test
  void readmeRecommendsTheMeasuredSettings() throws IOException {
    String readme = Files.readString(root.resolve("README.md"));
    StringBuilder line = new StringBuilder();
    LoadBenchmark.ENV.forEach((k, v) -> line.append(k).append('=').append(v).append(' '));
    line.append("java ").append(String.join(" ", LoadBenchmark.JVM)).append(" -jar gospan.jar run");
    assertThat(readme).contains("`" + line + "`");
  }

  @Test
  void examplesKeepTheImagesEntryPoint() throws IOException {
    List<JsonNode> containers = new ArrayList<>();
    try (MappingIterator<JsonNode> it = new YAMLMapper().readerFor(JsonNode.class)
        .readValues(root.resolve("examples/k8s/greeter-with-gospan.yaml").toFile())) {
      while (it.hasNext()) {
        it.next().path("spec").path("template").path("spec").path("containers").forEach(c -> {
          if (c.path("image").asText().startsWith("gospan:")) {
            containers.add(c);
          }
        });
      }
    }
    assertThat(containers).as("the k8s example's gospan containers (the server's and the client's pods)").hasSize(2);
    for (JsonNode gospan : containers) {
      assertThat(gospan.has("command")).as("k8s gospan container overrides the image's ENTRYPOINT").isFalse();
      gospan.path("env").forEach(e ->
          assertThat(e.path("name").asText()).as("k8s gospan env").isNotIn(LoadBenchmark.ENV.keySet()));
    }
    JsonNode compose = new YAMLMapper().readTree(root.resolve("docker-compose.yml").toFile());
    for (String name : List.of("gospan-server", "gospan-client")) {
      JsonNode service = compose.path("services").path(name);
      assertThat(service.isMissingNode()).as(name).isFalse();
      assertThat(service.has("entrypoint")).as("docker-compose %s overrides the image's ENTRYPOINT", name).isFalse();
      assertThat(service.path("environment").toString()).doesNotContain("MALLOC_ARENA_MAX");
    }
  }
}
