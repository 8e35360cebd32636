package io.gospan.receiver.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.probe.GrpcProbe;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * gRPC served through an HTTP/2 server's {@code ServeHTTP} (the example server's
 * {@code -http-handler}): x/net's HTTP/2 over h2c, and net/http's bundled HTTP/2 over TLS. The
 * sidecar attaches processHeaders and the trailers probes with the binary, and the hpack
 * WriteField probe only once that path served gRPC; from then on every call's request headers
 * and trailers (grpc-status, grpc-message) reach user space on the server's socket.
 */
class ServeHttpIT {

  static Path examples;
  static Path certs;

  @BeforeAll
  static void build() {
    examples = ExampleApps.build();
    certs = ExampleApps.repoRoot().resolve("examples/bin/certs");
  }

  @Test
  void h2cThroughXnetHttp2() throws Exception {
    check(Probe.HttpServer.XNET, new String[] {"-http-handler"}, List.of());
  }

  @Test
  void tlsThroughNetHttpsBundledHttp2() throws Exception {
    check(
        Probe.HttpServer.NETHTTP,
        new String[] {"-http-handler", "-tls", "-tls-cert", certs.resolve("server.pem").toString(), "-tls-key", certs.resolve("server-key.pem").toString()},
        List.of("-tls", "-ca", certs.resolve("ca.pem").toString()));
  }

  static void check(Probe.HttpServer server, String[] serverFlags, List<String> clientFlags) throws Exception {
    Probe writeField = Probe.writeField(server);
    List<HeaderEvent> events = Collections.synchronizedList(new ArrayList<>());
    Sidecar.Options d = Sidecar.Options.defaults();
    Sidecar.Options opts = new Sidecar.Options(d.headerNames(), 1 << 22, Duration.ofMillis(100),
        new ProcessSelector(List.of(new ProcessSelector.Rule(examples + "/*", null, null, null)), List.of()), d.procFs(), 16);
    try (Sidecar sidecar = Sidecar.start(opts, e -> { if (e instanceof HeaderEvent h) events.add(h); }, new Tracer.Listener() {});
        ExampleApps.Server s = ExampleApps.startServer(examples, serverFlags)) {
      assertThat(sidecar.awaitFirstScan(Duration.ofSeconds(10))).isTrue();
      await(() -> sidecar.tracer().traced().containsKey((int) s.pid()), "server traced");
      TracedBinary binary = sidecar.tracer().traced().get((int) s.pid());
      assertThat(binary.attached()).as("refused: %s", binary.refused())
          .contains(server == Probe.HttpServer.XNET ? Probe.XNET_PROCESS_HEADERS : Probe.NETHTTP_PROCESS_HEADERS)
          .doesNotContain(writeField);
      assertThat(binary.deferred()).contains(writeField);
      // a long-running client keeps the client binary attached, so the short-lived ones below
      // are traced from their first call; it calls a port nobody listens on, rarely
      List<String> idleCmd = new ArrayList<>(List.of(examples.resolve("greeter-client").toString(), "-addr", "127.0.0.1:1"));
      idleCmd.addAll(List.of("-n", "0", "-rate", "0.01", "-quiet"));
      Process idle = new ProcessBuilder(idleCmd).redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
      try {
        await(() -> sidecar.tracer().traced().containsKey((int) idle.pid()), "the idle client traced");
        calls(sidecar, s, server, writeField, binary, events, clientFlags);
      } finally {
        idle.destroy();
        idle.waitFor();
      }
    }
  }

  static void calls(Sidecar sidecar, ExampleApps.Server s, Probe.HttpServer server, Probe writeField, TracedBinary binary,
      List<HeaderEvent> events, List<String> clientFlags) throws Exception {
    {

      // The first gRPC request served this way attaches WriteField to the binary.
      ExampleApps.runClient(examples, s.address(), concat(clientFlags, "-rpc", "unary", "-n", "1"));
      await(() -> binary.attached().contains(writeField), writeField + " attached after the first call");

      ExampleApps.runClient(examples, s.address(), concat(clientFlags, "-rpc", "unary", "-n", "3"));
      ExampleApps.runClient(examples, s.address(), concat(clientFlags, "-rpc", "unary", "-fail-code", "NOT_FOUND"));
      await(() -> serverEnds(events, s.pid()) >= 5, "5 trailers blocks");
      Thread.sleep(200);

      List<HeaderEvent> mine;
      synchronized (events) {
        mine = events.stream().filter(e -> e.pid() == s.pid()).collect(Collectors.toList());
      }
      List<HeaderEvent> starts = mine.stream().filter(e -> e.probe() == ProbeKind.HTTP2_SERVER_PROCESS_HEADERS).toList();
      List<HeaderEvent> ends = mine.stream().filter(e -> e.probe() == ProbeKind.HTTP2_SERVER_WRITE_RES_HEADERS).toList();
      assertThat(starts).hasSize(5);
      assertThat(ends).hasSize(5);
      assertThat(mine).allSatisfy(e -> assertThat(e.side()).isEqualTo(Side.SERVER));
      for (HeaderEvent e : starts) {
        assertThat(e.header(":path")).isEqualTo("/greeter.Greeter/SayHello");
        assertThat(e.header(":authority")).isEqualTo(s.address());
        assertThat(e.grpcContentType()).isTrue();
        assertThat(e.endStream()).isFalse();
      }
      assertThat(ends).allSatisfy(e -> assertThat(e.endStream()).isTrue());
      // the first call ended before WriteField was attached: no fields; the next four have them
      assertThat(ends.subList(1, 5)).extracting(e -> e.header("grpc-status")).containsExactly("0", "0", "0", "5");
      assertThat(ends.get(4).header("grpc-message")).isNotEmpty();
      // each stream's start and end share the stream id and connection; the start has the socket
      Map<String, List<HeaderEvent>> byStream = mine.stream()
          .collect(Collectors.groupingBy(e -> e.connectionId() + "/" + e.streamId()));
      assertThat(byStream).hasSize(5);
      for (List<HeaderEvent> stream : byStream.values()) {
        assertThat(stream).extracting(HeaderEvent::probe)
            .containsExactly(ProbeKind.HTTP2_SERVER_PROCESS_HEADERS, ProbeKind.HTTP2_SERVER_WRITE_RES_HEADERS);
        assertThat(stream.get(0).sockets()).isNotNull();
        assertThat(stream.get(1).sockets()).isNull();
        assertThat(stream.get(0).sockets().localIp().getPort()).isEqualTo(s.port());
      }
      // client spans are linked by the same socket: the client's events carry its mirror
      HeaderEvent clientStart;
      synchronized (events) {
        clientStart = events.stream()
            .filter(e -> e.side() == Side.CLIENT && e.probe() == ProbeKind.LOOPY_WRITER_WRITE_HEADER)
            .reduce((a, b) -> b).orElseThrow();
      }
      HeaderEvent last = starts.get(4);
      assertThat(clientStart.sockets().local()).isEqualTo(last.sockets().remote());
      assertThat(clientStart.sockets().remote()).isEqualTo(last.sockets().local());

      if (server == Probe.HttpServer.NETHTTP) {
        // a plain HTTP/2 request (not gRPC) to the same server: no event, counted as skipped
        long skippedBefore = sidecar.probes().counters().get(GrpcProbe.NETHTTP_PROCESS_HEADERS).skipped();
        int before = events.size();
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newBuilder()
            .version(java.net.http.HttpClient.Version.HTTP_2).sslContext(trusting(certs.resolve("ca.pem"))).build()
            .send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("https://" + s.address() + "/healthz")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(r.version()).isEqualTo(java.net.http.HttpClient.Version.HTTP_2);
        await(() -> sidecar.probes().counters().get(GrpcProbe.NETHTTP_PROCESS_HEADERS).skipped() > skippedBefore,
            "the plain request's processHeaders hit skipped");
        Thread.sleep(200);
        synchronized (events) {
          assertThat(events.subList(before, events.size())).noneMatch(e -> e.pid() == s.pid());
        }
      }
      var counters = sidecar.probes().counters();
      GrpcProbe wf = GrpcProbe.valueOf(writeField.name());
      assertThat(counters.get(wf).hits()).as("WriteField hits").isPositive();
      assertThat(counters.get(wf).readFailed()).isZero();
    }
  }

  /** A TLS context trusting only the examples' CA. */
  static javax.net.ssl.SSLContext trusting(Path caPem) throws Exception {
    java.security.cert.Certificate ca;
    try (var in = java.nio.file.Files.newInputStream(caPem)) {
      ca = java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
    java.security.KeyStore ks = java.security.KeyStore.getInstance(java.security.KeyStore.getDefaultType());
    ks.load(null, null);
    ks.setCertificateEntry("ca", ca);
    javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    javax.net.ssl.SSLContext ctx = javax.net.ssl.SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }

  static long serverEnds(List<HeaderEvent> events, long pid) {
    synchronized (events) {
      return events.stream().filter(e -> e.pid() == pid && e.probe() == ProbeKind.HTTP2_SERVER_WRITE_RES_HEADERS).count();
    }
  }

  static String[] concat(List<String> a, String... b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(List.of(b));
    return out.toArray(new String[0]);
  }

  static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }
}
