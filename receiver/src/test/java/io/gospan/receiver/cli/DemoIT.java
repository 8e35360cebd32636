package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.testing.ExampleApps;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
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
 * DEMO_SECONDS): it prints the chain greeter-client → greeter-relay → greeter-server, each line
 * with its parent: client calls whose trace is the client span, the relay's server span (its
 * child), the relay's two client spans (children of that), and the server's two server spans
 * (children of those); a NOT_FOUND status; then it stops everything it started.
 */
class DemoIT {

  static final Pattern SPAN = Pattern.compile(
      "(CLIENT|SERVER) (\\S+) \\S+ (\\S+) .* service=(\\S+) pid=\\S+ trace=([0-9a-f]{32}) span=([0-9a-f]{16}) parent=(\\S+)");

  record Line(String kind, String method, String code, String service, String trace, String span, String parent) {
    static Line of(Matcher m) {
      return new Line(m.group(1), m.group(2), m.group(3), m.group(4), m.group(5), m.group(6), m.group(7));
    }
  }

  @Test
  void theDemoShowsTheChainClientRelayServerWithParentsAndStatus() throws Exception {
    ProcessBuilder pb = new ProcessBuilder("examples/demo.sh").directory(ExampleApps.repoRoot().toFile()).redirectErrorStream(true);
    pb.environment().put("DEMO_SECONDS", "12");
    pb.environment().remove("OTEL_EXPORTER_OTLP_ENDPOINT");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();

    List<Line> spans = out.lines().map(SPAN::matcher).filter(Matcher::find).map(Line::of).collect(Collectors.toList());
    Map<String, List<Line>> childrenOf = new HashMap<>();
    for (Line l : spans) {
      childrenOf.computeIfAbsent(l.trace() + "/" + l.parent(), k -> new ArrayList<>()).add(l);
    }
    long chains = spans.stream()
        .filter(c -> c.kind().equals("CLIENT") && c.service().equals("greeter-client") && c.parent().equals("-"))
        .filter(c -> {
          List<Line> relayServer = children(childrenOf, c, "SERVER", "greeter-relay");
          if (relayServer.size() != 1) {
            return false;
          }
          List<Line> relayClients = children(childrenOf, relayServer.get(0), "CLIENT", "greeter-relay");
          return relayClients.size() == 2
              && relayClients.stream().allMatch(rc -> children(childrenOf, rc, "SERVER", "greeter-server").size() == 1);
        })
        .count();
    assertThat(chains).as("client calls shown as the whole chain client -> relay -> 2 x server:\n" + out).isGreaterThanOrEqualTo(5);
    assertThat(spans).as(out).anyMatch(l -> l.service().equals("greeter-client") && l.code().equals("NOT_FOUND"));
    assertThat(spans).as(out).anyMatch(l -> l.service().equals("greeter-server") && l.method().equals("greeter.Greeter/SayHelloBidi"));
    assertThat(out).contains("probes detached");
    // nothing the demo started is left running (programs of this clone's examples/bin: other
    // clones on the machine may run their own)
    String examples = ExampleApps.repoRoot().resolve("examples/bin").toString();
    assertThat(ProcessHandle.allProcesses()
            .map(h -> h.info().command().orElse(""))
            .filter(c -> c.startsWith(examples))
            .filter(c -> c.endsWith("greeter-server") || c.endsWith("greeter-client") || c.endsWith("greeter-relay")))
        .isEmpty();
  }

  static List<Line> children(Map<String, List<Line>> childrenOf, Line parent, String kind, String service) {
    return childrenOf.getOrDefault(parent.trace() + "/" + parent.span(), List.of()).stream()
        .filter(l -> l.kind().equals(kind) && l.service().equals(service))
        .collect(Collectors.toList());
  }
}
