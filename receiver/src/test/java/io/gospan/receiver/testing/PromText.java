package io.gospan.receiver.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Test helper: a Prometheus text exposition parsed by Prometheus's own parser
 * (github.com/prometheus/common/expfmt, through receiver/src/test/go/promtext), not by code of
 * ours. The families come back as client_model's JSON: {@code name}, {@code type} ({@code
 * HISTOGRAM}, ...), {@code metric[]} with {@code label[]} and e.g. {@code histogram.sampleCount}.
 * Text that does not parse is an {@link AssertionError} carrying the parser's message.
 */
public final class PromText {
  private PromText() {}

  /** Builds promtext once per JVM into receiver/target. */
  static Path tool() {
    return ExampleApps.goTool("receiver/src/test/go/promtext", "promtext");
  }

  /** GET {@code url} (a {@code /metrics}); its body parsed: family name → family. */
  public static Map<String, JsonNode> scrape(String url) throws IOException, InterruptedException {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).build(),
        HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new AssertionError("GET " + url + ": " + r.statusCode() + "\n" + r.body());
    }
    return parse(r.body());
  }

  /** {@code text} in the Prometheus text format, parsed: family name → family. */
  public static Map<String, JsonNode> parse(String text) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(tool().toString()).start();
    try (var in = p.getOutputStream()) {
      in.write(text.getBytes(StandardCharsets.UTF_8));
    }
    byte[] out = p.getInputStream().readAllBytes();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new AssertionError("Prometheus's text parser refused it: " + err.strip() + "\n" + text);
    }
    Map<String, JsonNode> families = new HashMap<>();
    for (JsonNode f : new ObjectMapper().readTree(out)) {
      families.put(f.path("name").asText(), f);
    }
    return families;
  }

  /** The labels of one metric of a family. */
  public static Map<String, String> labels(JsonNode metric) {
    Map<String, String> out = new HashMap<>();
    for (JsonNode l : metric.path("label")) {
      out.put(l.path("name").asText(), l.path("value").asText());
    }
    return out;
  }

  /** A histogram family's sample count summed over its metrics whose labels include {@code match}. */
  public static long histogramCount(JsonNode family, Map<String, String> match) {
    long sum = 0;
    for (Iterator<JsonNode> it = family.path("metric").elements(); it.hasNext(); ) {
      JsonNode m = it.next();
      if (labels(m).entrySet().containsAll(match.entrySet())) {
        sum += m.path("histogram").path("sampleCount").asLong();
      }
    }
    return sum;
  }
}
