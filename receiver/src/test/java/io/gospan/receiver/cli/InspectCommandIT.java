package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.discovery.ProcessSelector;
import io.gospan.receiver.discovery.Sidecar;
import io.gospan.receiver.discovery.TracedBinary;
import io.gospan.receiver.discovery.Tracer;
import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.testing.ExampleApps;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code gospan inspect} tells the truth: its verdict on the stripped example server is checked
 * against what the sidecar really does with that binary, and unsupported inputs get a clear
 * verdict and exit code.
 */
class InspectCommandIT {

  record Result(int exit, String out) {}

  static Result inspect(String target) {
    InspectCommand c = new InspectCommand();
    c.target = target;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    c.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
    int exit = c.call();
    return new Result(exit, buf.toString(StandardCharsets.UTF_8));
  }

  /** The runs of a binary `gospan run` traces, as its discovery configuration says (the same sentence the code keeps). */
  @Test
  void theRunsTracedLineFollowsTheDiscoveryConfiguration() throws Exception {
    Path client = ExampleApps.build().resolve("greeter-client");
    assertThat(inspect(client.toString()).out()).contains("\nruns traced: every run once gospan has seen the binary: a first run"
        + " that exits before gospan looks is missed, and gospan learns the binary from its exec notice");
    for (String[] c : new String[][] {
        {"discovery: {hold_new_binaries: true}\n", "runs traced: every run, the first included: an exec of this binary,"
            + " until gospan has judged it, waits for its probes, at most 1000 ms (discovery.hold_new_binaries"},
        {"discovery: {hold_new_binaries: true, hold_limit: 100ms}\n", "at most 100 ms"},
        {"discovery: {linger: 0s}\n", "runs traced: the processes gospan finds running (discovery.linger 0s"}}) {
      Path config = Files.createTempFile("gospan-inspect", ".yaml");
      Files.writeString(config, c[0]);
      InspectCommand cmd = new InspectCommand();
      cmd.target = client.toString();
      cmd.config = config;
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      cmd.out = new PrintStream(buf, true, StandardCharsets.UTF_8);
      assertThat(cmd.call()).isZero();
      assertThat(buf.toString(StandardCharsets.UTF_8)).as(c[0]).contains(c[1]);
      Files.delete(config);
    }
  }

  @Test
  void theVerdictOnTheStrippedExampleServerMatchesWhatTheSidecarDoes() throws Exception {
    Path dir = ExampleApps.build("--stripped");
    Result r = inspect(dir.resolve("greeter-server").toString());
    boolean saysSpans = r.out().contains("verdict:  client spans, server spans");
    assertThat(r.exit()).as(r.out()).isEqualTo(saysSpans ? ExitCodes.OK : ExitCodes.UNSUPPORTED);
    assertThat(r.out()).contains("go:       go1.").contains("grpc-go:  v1.").contains("from pclntab");
    if (!saysSpans) {
      assertThat(r.out()).contains("verdict:  unsupported").contains("no DWARF");
    }
    assertThat(r.out()).contains("calls linked inside the process: yes (ctx walk)"); // catalog layouts, no goid without DWARF
    // the connection types, from the runtime type information of the stripped binary, and what they promise
    assertThat(r.out()).containsPattern("(?m)^connections: \\(runtime type information; netFD\\.pfd\\.Sysfd at \\d+\\)$")
        .containsPattern("(?m)^  \\*net\\.TCPConn +socket: \\*net\\.netFD at \\+0 \\(conn\\.fd\\)$")
        .containsPattern("(?m)^  \\*crypto/tls\\.Conn +wraps the connection at \\+0 \\(conn\\)$")
        .containsPattern("(?m)^  \\*golang\\.org/x/net/http2/h2c\\.bufConn +wraps the connection at \\+0 \\(Conn\\)$");
    if (saysSpans) {
      assertThat(r.out()).contains(", client->server linking by socket (TCP and unix domain sockets; ");
    }

    List<HeaderEvent> events = Collections.synchronizedList(new ArrayList<>());
    Sidecar.Options d = Sidecar.Options.defaults();
    Sidecar.Options opts = new Sidecar.Options(d.headerNames(), 1 << 22, Duration.ofMillis(100),
        new ProcessSelector(List.of(new ProcessSelector.Rule(dir + "/*", null, null, null)), List.of()), d.procFs(), 16);
    try (Sidecar sidecar = Sidecar.start(opts, e -> { if (e instanceof HeaderEvent h) events.add(h); }, new Tracer.Listener() {});
        ExampleApps.Server s = ExampleApps.startServer(dir)) {
      sidecar.tracer().scan();
      ExampleApps.runClient(ExampleApps.build(), s.address(), "-n", "2");
      Thread.sleep(500);
      long serverEnds;
      synchronized (events) {
        serverEnds = events.stream()
            .filter(e -> e.pid() == s.pid() && e.side() == Side.SERVER && e.endStream()) // writeStatus: the streams set
            .count();
      }
      assertThat(sidecar.tracer().traced().containsKey((int) s.pid())).as("traced, as inspect said:\n" + r.out()).isEqualTo(saysSpans);
      assertThat(serverEnds).as("server spans, as inspect said:\n" + r.out()).isEqualTo(saysSpans ? 2 : 0);
      if (saysSpans) {
        // the probes inspect says "will attach" are those the sidecar attached or defers (WriteField)
        TracedBinary b = sidecar.tracer().traced().get((int) s.pid());
        Set<String> used = new TreeSet<>();
        b.attached().forEach(p -> used.add(p.name().toLowerCase(Locale.ROOT)));
        b.deferred().forEach(p -> used.add(p.name().toLowerCase(Locale.ROOT)));
        assertThat(used).as("attached or deferred, refused: %s\n%s", b.refused(), r.out()).isEqualTo(willAttach(r.out()));
      }
    }
  }

  /**
   * The in-process linking line: what {@code run} attaches (InProcessPropagationIT shows the
   * records), and why not for the stack ABI.
   */
  @Test
  void saysWhetherCallsAreLinkedInsideTheProcess() {
    Path bin = ExampleApps.repoRoot().resolve("examples/bin");
    Result relay = inspect(bin.resolve("greeter-relay").toString());
    assertThat(relay.exit()).as(relay.out()).isEqualTo(ExitCodes.OK);
    assertThat(relay.out()).contains("\ncalls linked inside the process: yes (ctx walk, goroutine, parent goroutine)\n");
    assertThat(willAttach(relay.out())).contains("server_handle_stream", "http2_client_new_stream");
    Result go117 = inspect(ExampleApps.build("--go", "1.17.13", "--grpc", "v1.40.0").resolve("greeter-server").toString());
    assertThat(go117.out()).contains("\ncalls linked inside the process: yes (ctx walk, goroutine)\n");
    Result go116 = inspect(ExampleApps.build("--go", "1.16.15", "--grpc", "v1.40.0").resolve("greeter-server").toString());
    assertThat(go116.exit()).as(go116.out()).isEqualTo(ExitCodes.OK);
    assertThat(go116.out()).contains("\ncalls linked inside the process: no: server_handle_stream stack ABI (Go <= 1.16)");
  }

  /** The probes whose line in inspect's output says "will attach". */
  static Set<String> willAttach(String out) {
    Set<String> probes = new TreeSet<>();
    Matcher m = Pattern.compile("(?m)^  (\\w+) +\\S+\\n +.*: will attach( at its \\d+ RET instructions .*| at \\d+ emulated jumps? before its returns, .*| past its guard, .*)?$").matcher(out);
    while (m.find()) {
      probes.add(m.group(1));
    }
    return probes;
  }

  @Test
  void aGoBinaryWithoutGrpcIsUnsupported() {
    // the gotruth helper: a Go program that does not link grpc-go
    Path gotruth = ExampleApps.repoRoot().resolve("receiver/target/gotruth");
    ExampleApps.run(List.of("go", "-C", ExampleApps.repoRoot().resolve("offsets/src/test/go/gotruth").toString(),
        "build", "-o", gotruth.toString(), "."), 300);
    Result r = inspect(gotruth.toString());
    assertThat(r.exit()).as(r.out()).isEqualTo(ExitCodes.UNSUPPORTED);
    assertThat(r.out()).contains("grpc-go:  not linked").contains("verdict:  unsupported");
  }

  @Test
  void aNonGoFileAndAMissingFileAreClear() {
    Result notGo = inspect("/bin/true");
    assertThat(notGo.exit()).isEqualTo(ExitCodes.UNSUPPORTED);
    assertThat(notGo.out()).contains("verdict: unsupported").containsIgnoringCase("go");
    assertThat(inspect("/nonexistent/gospan-binary").exit()).isEqualTo(ExitCodes.ERROR);
    assertThat(inspect("999999999").exit()).isEqualTo(ExitCodes.ERROR); // no such pid
  }
}
