package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The README's first command, as written ({@code examples/demo.sh}, stopped after a while by
 * DEMO_SECONDS): it prints client and server spans of the same calls, the server span a child
 * of the client span, and a NOT_FOUND status, then stops everything it started.
 */
class DemoIT {

  static final Pattern SPAN =
      Pattern.compile("(CLIENT|SERVER) (\\S+) \\S+ (\\S+) .* trace=([0-9a-f]{32}) span=([0-9a-f]{16}) parent=(\\S+)");

  @Test
  void theDemoShowsLinkedClientAndServerSpansWithStatus() throws Exception {
    ProcessBuilder pb = new ProcessBuilder("examples/demo.sh").directory(ExampleApps.repoRoot().toFile()).redirectErrorStream(true);
    pb.environment().put("DEMO_SECONDS", "10");
    pb.environment().remove("OTEL_EXPORTER_OTLP_ENDPOINT");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();

    Map<String, String> clientSpanByTrace = new HashMap<>();
    List<Matcher> spans = out.lines().map(SPAN::matcher).filter(Matcher::find).collect(Collectors.toList());
    for (Matcher m : spans) {
      if (m.group(1).equals("CLIENT")) {
        clientSpanByTrace.put(m.group(4), m.group(5));
      }
    }
    long linkedServers =
        spans.stream()
            .filter(m -> m.group(1).equals("SERVER"))
            .filter(m -> m.group(6).equals(clientSpanByTrace.get(m.group(4))))
            .count();
    assertThat(linkedServers).as("server spans whose parent is the client span of the same trace:\n" + out).isGreaterThanOrEqualTo(5);
    assertThat(spans).as(out).anyMatch(m -> m.group(1).equals("CLIENT") && m.group(3).equals("NOT_FOUND"));
    assertThat(spans).as(out).anyMatch(m -> m.group(2).equals("greeter.Greeter/SayHelloBidi"));
    assertThat(out).contains("probes detached");
    // nothing the demo started is left running
    assertThat(ProcessHandle.allProcesses()
            .map(h -> h.info().command().orElse(""))
            .filter(c -> c.endsWith("greeter-server") || c.endsWith("greeter-client")))
        .isEmpty();
  }
}
