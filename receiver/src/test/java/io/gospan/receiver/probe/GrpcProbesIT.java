package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.offsets.GoBinary;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.discovery.BinaryInspection;
import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.HeaderField;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.testing.ExampleApps;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * grpc-go's transport probes on the example server and client, real BPF, in both probe sets: the
 * event sequence of every RPC shape (headers set: a stream's start is the client's writeHeader and
 * the server's operateHeaders, its end the END_STREAM trailers of the server's writeHeader and the
 * client's operateHeaders; streams set: the client's start at NewStream's return, its end at
 * closeStream, the server's start at operateHeaders, its end at writeStatus: see {@link
 * io.gospan.receiver.event.ProbeKind}), header values, connection identity and socket 4-tuples, TLS,
 * both Go ABIs, many concurrent streams, the hits per call, cancelled and timed-out calls, and that
 * credentials never leave the kernel.
 */
class GrpcProbesIT {

  static final String SAY_HELLO = "/greeter.Greeter/SayHello";

  static Path examples;

  @BeforeAll
  static void build() {
    examples = ExampleApps.build();
  }

  /** One stream as one process saw it: its events in order. */
  record Stream(int pid, long connId, int streamId, List<HeaderEvent> events) {
    Side side() {
      return events.get(0).side();
    }

    List<String> shape() {
      return events.stream()
          .map(e -> e.probe().name() + (e.endStream() ? "+END" : ""))
          .collect(Collectors.toList());
    }

    HeaderEvent last() {
      return events.get(events.size() - 1);
    }
  }

  /**
   * Groups events into streams by (pid, connection, stream id), as SpanAssembler does; a start
   * on a key that already has one begins a new stream, since Go may allocate a new connection at
   * the address of a closed one (the connection id repeats over time).
   */
  static List<Stream> streams(List<HeaderEvent> events) {
    Map<List<Object>, List<HeaderEvent>> current = new LinkedHashMap<>();
    List<List<HeaderEvent>> all = new ArrayList<>();
    for (HeaderEvent e : events) {
      List<Object> key = List.of(e.pid(), e.connectionId(), e.streamId());
      List<HeaderEvent> l = current.get(key);
      if (l == null || (isStart(e) && l.stream().anyMatch(GrpcProbesIT::isStart))) {
        l = new ArrayList<>();
        current.put(key, l);
        all.add(l);
      }
      l.add(e);
    }
    return all.stream()
        .map(l -> new Stream(l.get(0).pid(), l.get(0).connectionId(), l.get(0).streamId(), l))
        .collect(Collectors.toList());
  }

  static boolean isStart(HeaderEvent e) {
    return (e.probe() == ProbeKind.LOOPY_WRITER_WRITE_HEADER && e.side() == Side.CLIENT)
        || e.probe() == ProbeKind.HTTP2_CLIENT_NEW_STREAM
        || e.probe() == ProbeKind.HTTP2_SERVER_OPERATE_HEADERS
        || e.probe() == ProbeKind.HTTP2_SERVER_PROCESS_HEADERS;
  }

  /** The server stream that is the other end of a client stream: mirrored 4-tuple, same id. */
  static Stream peer(Stream client, List<Stream> all) {
    List<Stream> peers =
        all.stream()
            .filter(s -> s.side() == Side.SERVER && s.streamId() == client.streamId())
            .filter(s -> Objects.equals(s.events().get(0).sockets(), client.events().get(0).sockets().reversed()))
            .collect(Collectors.toList());
    assertThat(peers).as("server streams mirroring client stream %s", client).hasSize(1);
    return peers.get(0);
  }

  static Predicate<List<HeaderEvent>> endsSeen(int clientEnds, int serverEnds) {
    return l ->
        l.stream().filter(e -> e.side() == Side.CLIENT && e.endStream()).count() >= clientEnds
            && l.stream().filter(e -> e.side() == Side.SERVER && e.endStream()).count() >= serverEnds;
  }

  static final List<String> CLIENT_OK =
      List.of("LOOPY_WRITER_WRITE_HEADER", "HTTP2_CLIENT_OPERATE_HEADERS", "HTTP2_CLIENT_OPERATE_HEADERS+END");
  static final List<String> SERVER_OK =
      List.of("HTTP2_SERVER_OPERATE_HEADERS", "LOOPY_WRITER_WRITE_HEADER", "LOOPY_WRITER_WRITE_HEADER+END");
  static final List<String> CLIENT_TRAILERS_ONLY =
      List.of("LOOPY_WRITER_WRITE_HEADER", "HTTP2_CLIENT_OPERATE_HEADERS+END");
  static final List<String> SERVER_TRAILERS_ONLY =
      List.of("HTTP2_SERVER_OPERATE_HEADERS", "LOOPY_WRITER_WRITE_HEADER+END");
  /** The streams set: one start and one end per stream, whatever the status. */
  static final List<String> CLIENT_STREAMS = List.of("HTTP2_CLIENT_NEW_STREAM", "HTTP2_CLIENT_CLOSE_STREAM+END");
  static final List<String> SERVER_STREAMS = List.of("HTTP2_SERVER_OPERATE_HEADERS", "HTTP2_SERVER_WRITE_STATUS+END");

  /** Runs unary calls (3 OK, 1 NOT_FOUND, 1 INTERNAL) against a traced server and checks every event. */
  static void checkUnary(Path dir, String... serverAndClientTlsFlags) throws Exception {
    checkUnary(ProbeSession::new, dir, serverAndClientTlsFlags);
  }

  static void checkUnary(java.util.function.Supplier<ProbeSession> sessions, Path dir, String... serverAndClientTlsFlags)
      throws Exception {
    Path server = dir.resolve("greeter-server");
    Path client = dir.resolve("greeter-client");
    boolean tls = serverAndClientTlsFlags.length > 0;
    Path certs = ExampleApps.repoRoot().resolve("examples/bin/certs");
    String[] serverFlags =
        tls ? new String[] {"-tls", "-tls-cert", certs.resolve("server.pem").toString(), "-tls-key", certs.resolve("server-key.pem").toString()}
            : new String[0];
    List<String> tlsClient = tls ? List.of("-tls", "-ca", certs.resolve("ca.pem").toString()) : List.of();
    try (ProbeSession session = sessions.get().trace(server).trace(client);
        ExampleApps.Server s = ExampleApps.startServer(dir, serverFlags)) {
      ExampleApps.runClient(dir, s.address(), concat(tlsClient, "-rpc", "unary", "-n", "3"));
      ExampleApps.runClient(dir, s.address(), concat(tlsClient, "-rpc", "unary", "-fail-code", "NOT_FOUND"));
      ExampleApps.runClient(dir, s.address(), concat(tlsClient, "-rpc", "unary", "-fail-code", "INTERNAL"));
      List<HeaderEvent> events = session.pollUntil(endsSeen(5, 5), 10_000);
      List<Stream> all = streams(events);
      List<Stream> clients = all.stream().filter(x -> x.side() == Side.CLIENT).collect(Collectors.toList());
      assertThat(clients).as("client streams").hasSize(5);
      assertThat(all).as("all streams").hasSize(10);
      assertThat(clients).extracting(Stream::streamId).containsExactly(1, 3, 5, 1, 1);

      for (int i = 0; i < clients.size(); i++) {
        Stream c = clients.get(i);
        Stream sv = peer(c, all);
        assertThat(sv.pid()).isEqualTo((int) s.pid());
        boolean ok = i < 3;
        assertThat(c.shape()).isEqualTo(ok ? CLIENT_OK : CLIENT_TRAILERS_ONLY);
        assertThat(sv.shape()).isEqualTo(ok ? SERVER_OK : SERVER_TRAILERS_ONLY);
        // request headers, on both ends
        for (HeaderEvent request : List.of(c.events().get(0), sv.events().get(0))) {
          assertThat(request.header(":path")).isEqualTo(SAY_HELLO);
          assertThat(request.header(":authority")).isEqualTo(s.address());
          assertThat(request.header("user-agent")).contains("grpc-go/"); // allowed metadata
          // read only on the ServeHTTP path (ServeHttpIT), unless allowed
          assertThat(request.header("content-type")).isNull();
        }
        // every event of a stream has the same connection; only its start has the socket
        for (Stream st : List.of(c, sv)) {
          assertThat(st.events()).allSatisfy(e -> assertThat(e.connectionId()).isNotZero().isEqualTo(st.connId()));
          assertThat(st.events().get(0).fd()).isNotNegative();
          assertThat(st.events().get(0).sockets()).isNotNull();
          assertThat(st.events().subList(1, st.events().size())).allSatisfy(e -> {
            assertThat(e.fd()).isEqualTo(-1);
            assertThat(e.sockets()).isNull();
          });
        }
        assertThat(c.events().get(0).sockets().remoteIp().getPort()).isEqualTo(s.port());
        assertThat(c.events().get(0).sockets().remoteIp().getAddress().getHostAddress()).isEqualTo("127.0.0.1");
        assertThat(c.events().get(0).sockets().localIp().getAddress().getHostAddress()).isEqualTo("127.0.0.1");
        String code = ok ? "0" : i == 3 ? "5" : "13";
        assertThat(c.last().header("grpc-status")).isEqualTo(code);
        assertThat(sv.last().header("grpc-status")).isEqualTo(code);
        if (!ok) {
          assertThat(c.last().header("grpc-message")).contains("%");
          assertThat(sv.last().header("grpc-message")).isEqualTo(c.last().header("grpc-message"));
        } else {
          assertThat(c.events().get(1).header(":status")).isEqualTo("200");
          assertThat(sv.events().get(1).header(":status")).isEqualTo("200");
        }
      }
      Map<GrpcProbe, ProbeCounters> counters = session.probes.counters();
      // in-process propagation (Go >= 1.17 binaries): no call is made while serving one here, so
      // NewStream finds no parent for any stream it returns, and neither probe sends anything
      for (GrpcProbe p : List.of(GrpcProbe.SERVER_HANDLE_STREAM, GrpcProbe.HTTP2_CLIENT_NEW_STREAM)) {
        ProbeCounters pc = counters.get(p);
        assertThat(pc.readFailed()).as("%s", p).isZero();
        assertThat(pc.eventsSent()).as("%s", p).isZero();
      }
      ProbeCounters newStream = counters.get(GrpcProbe.HTTP2_CLIENT_NEW_STREAM);
      assertThat(newStream.noParent()).isEqualTo(newStream.hits() - newStream.skipped());
      // grpc-go's transport probes send an event per hit; the ServeHTTP path's do not (WriteField
      // is hit by every header field grpc-go's own encoder writes, and returns at once)
      counters.keySet().removeIf(p -> p.probe().serveHttp() || p.probe().inProcess());
      assertThat(counters.values()).allSatisfy(pc -> {
        assertThat(pc.ringBufferFull()).isZero();
        assertThat(pc.readFailed()).isZero();
        assertThat(pc.unknownItab()).isZero();
        assertThat(pc.hits()).isEqualTo(pc.eventsSent());
        assertThat(pc.skipped()).isZero(); // an extra header name: response headers are wanted
      });
      assertThat(session.probes.malformedRecords()).isZero();
    }
  }

  /**
   * The streams set on unary calls (3 OK, 1 NOT_FOUND, 1 INTERNAL): per stream one start and one
   * end; the client's start carries :path and the socket, the server's the request headers; both
   * ends the status grpc-go holds, the message as the handler wrote it (not percent-encoded); per
   * call 2 hits on the client (NewStream where it returns the stream, closeStream past its guard) and 3 on the
   * server (operateHeaders, handleStream, writeStatus).
   */
  static void checkUnaryStreams(java.util.function.Supplier<ProbeSession> sessions, Path dir, String... serverAndClientTlsFlags)
      throws Exception {
    Path server = dir.resolve("greeter-server");
    Path client = dir.resolve("greeter-client");
    boolean tls = serverAndClientTlsFlags.length > 0;
    Path certs = ExampleApps.repoRoot().resolve("examples/bin/certs");
    String[] serverFlags =
        tls ? new String[] {"-tls", "-tls-cert", certs.resolve("server.pem").toString(), "-tls-key", certs.resolve("server-key.pem").toString()}
            : new String[0];
    List<String> tlsClient = tls ? List.of("-tls", "-ca", certs.resolve("ca.pem").toString()) : List.of();
    try (ProbeSession session = sessions.get().trace(server).trace(client);
        ExampleApps.Server s = ExampleApps.startServer(dir, serverFlags)) {
      assertThat(session.inspect(client).probeSet()).isEqualTo(Probe.ProbeSet.STREAMS);
      assertThat(session.attacher.binary(ExeKey.of(client)).orElseThrow().attached())
          .doesNotContain(Probe.LOOPY_WRITER_WRITE_HEADER, Probe.HTTP2_CLIENT_OPERATE_HEADERS)
          .contains(Probe.HTTP2_CLIENT_NEW_STREAM, Probe.HTTP2_CLIENT_CLOSE_STREAM, Probe.HTTP2_SERVER_WRITE_STATUS);
      ExampleApps.runClient(dir, s.address(), concat(tlsClient, "-rpc", "unary", "-n", "3"));
      ExampleApps.runClient(dir, s.address(), concat(tlsClient, "-rpc", "unary", "-fail-code", "NOT_FOUND"));
      ExampleApps.runClient(dir, s.address(), concat(tlsClient, "-rpc", "unary", "-fail-code", "INTERNAL"));
      List<HeaderEvent> events = session.pollUntil(endsSeen(5, 5), 10_000);
      List<Stream> all = streams(events);
      List<Stream> clients = all.stream().filter(x -> x.side() == Side.CLIENT).collect(Collectors.toList());
      assertThat(clients).as("client streams").hasSize(5);
      assertThat(all).as("all streams").hasSize(10);
      assertThat(clients).extracting(Stream::streamId).containsExactly(1, 3, 5, 1, 1);
      for (int i = 0; i < clients.size(); i++) {
        Stream c = clients.get(i);
        Stream sv = peer(c, all);
        assertThat(sv.pid()).isEqualTo((int) s.pid());
        boolean ok = i < 3;
        assertThat(c.shape()).isEqualTo(CLIENT_STREAMS);
        assertThat(sv.shape()).isEqualTo(SERVER_STREAMS);
        // the client's start: the method from grpc-go's stream, nothing else
        assertThat(c.events().get(0).fields()).extracting(HeaderField::name).containsExactly(":path");
        assertThat(c.events().get(0).header(":path")).isEqualTo(SAY_HELLO);
        HeaderEvent request = sv.events().get(0);
        assertThat(request.header(":path")).isEqualTo(SAY_HELLO);
        assertThat(request.header(":authority")).isEqualTo(s.address());
        assertThat(request.header("user-agent")).contains("grpc-go/"); // allowed request metadata
        for (Stream st : List.of(c, sv)) {
          assertThat(st.events()).allSatisfy(e -> assertThat(e.connectionId()).isNotZero().isEqualTo(st.connId()));
          assertThat(st.events().get(0).sockets()).isNotNull();
          assertThat(st.last().sockets()).isNull();
          assertThat(st.last().fd()).isEqualTo(-1);
        }
        assertThat(c.events().get(0).sockets().remoteIp().getPort()).isEqualTo(s.port());
        String code = ok ? "0" : i == 3 ? "5" : "13";
        assertThat(c.last().header("grpc-status")).isEqualTo(code);
        assertThat(sv.last().header("grpc-status")).isEqualTo(code);
        if (ok) {
          assertThat(c.last().header("grpc-message")).isNull();
          assertThat(sv.last().header("grpc-message")).isNull();
        } else {
          // grpc-go's own string on both ends: the handler's message, not percent-encoded
          assertThat(sv.last().header("grpc-message")).isEqualTo((i == 3 ? "not found" : "internal") + ": ñ");
          assertThat(c.last().header("grpc-message")).isEqualTo(sv.last().header("grpc-message"));
        }
      }
      Map<GrpcProbe, ProbeCounters> counters = session.probes.counters();
      // hits per call: 2 on the client, 3 on the server; closeStream is called twice per stream by
      // grpc-go, its probe past the guard is hit once
      assertThat(counters.get(GrpcProbe.HTTP2_CLIENT_NEW_STREAM).hits()).isEqualTo(5);
      assertThat(counters.get(GrpcProbe.HTTP2_CLIENT_CLOSE_STREAM).hits()).isEqualTo(5);
      assertThat(counters.get(GrpcProbe.HTTP2_SERVER_OPERATE_HEADERS).hits()).isEqualTo(5);
      assertThat(counters.get(GrpcProbe.SERVER_HANDLE_STREAM).hits()).isEqualTo(5);
      assertThat(counters.get(GrpcProbe.HTTP2_SERVER_WRITE_STATUS).hits()).isEqualTo(5);
      assertThat(counters.get(GrpcProbe.LOOPY_WRITER_WRITE_HEADER).hits()).isZero();
      assertThat(counters.get(GrpcProbe.HTTP2_CLIENT_OPERATE_HEADERS).hits()).isZero();
      // no call is made while serving one: NewStream sends the start, no StreamParent
      ProbeCounters newStream = counters.get(GrpcProbe.HTTP2_CLIENT_NEW_STREAM);
      assertThat(newStream.eventsSent()).isEqualTo(5);
      assertThat(newStream.noParent()).isEqualTo(5);
      assertThat(session.parents).isEmpty();
      counters.keySet().removeIf(p -> p.probe().serveHttp());
      assertThat(counters.values()).allSatisfy(pc -> {
        assertThat(pc.ringBufferFull()).isZero();
        assertThat(pc.readFailed()).isZero();
        assertThat(pc.unknownItab()).isZero();
        assertThat(pc.noOffsets()).isZero();
      });
      assertThat(session.probes.malformedRecords()).isZero();
    }
  }

  static String[] concat(List<String> a, String... b) {
    List<String> l = new ArrayList<>(a);
    l.addAll(List.of(b));
    return l.toArray(new String[0]);
  }

  @Test
  void unaryCallsYieldTheDesignSequenceWithHeadersAndMirroredSockets() throws Exception {
    checkUnary(examples);
  }

  @Test
  void unaryCallsInTheStreamsSetAreOneStartAndOneEndPerStream() throws Exception {
    checkUnaryStreams(() -> new ProbeSession(ProbeSession.STREAMS), examples);
  }

  @Test
  void theStreamsSetForTlsOldGoAndOldGrpcGoAndTheFallbackPaths() throws Exception {
    checkUnaryStreams(() -> new ProbeSession(ProbeSession.STREAMS), examples, "tls");
    checkUnaryStreams(() -> new ProbeSession("test/grpc_compat.bpf.o", ProbeSession.STREAMS), examples, "tls");
    checkUnaryStreams(() -> new ProbeSession(ProbeSession.STREAMS), ExampleApps.build("--go", "1.17.13", "--grpc", "v1.40.0"));
    checkUnaryStreams(() -> new ProbeSession(ProbeSession.STREAMS), ExampleApps.build("--go", "1.22.12", "--grpc", "v1.60.1"));
    // grpc-go v1.69-v1.76: ClientStream embeds *Stream (the guard swaps the state through the pointer)
    checkUnaryStreams(() -> new ProbeSession(ProbeSession.STREAMS), ExampleApps.build("--grpc", "v1.72.0"));
  }

  /**
   * A call the client cancels and one whose deadline passes, while the server still works on them:
   * in the streams set the client span ends when the call ends, with CANCELLED and
   * DEADLINE_EXCEEDED (closeStream of the caller's own close), not at the stream timeout; the
   * server span ends when the handler returns, with the status it wrote.
   */
  @Test
  void cancelledAndTimedOutCallsEndWhenTheyEnd() throws Exception {
    try (ProbeSession session = new ProbeSession(ProbeSession.STREAMS)
            .trace(examples.resolve("greeter-server")).trace(examples.resolve("greeter-client"));
        ExampleApps.Server s = ExampleApps.startServer(examples)) {
      ExampleApps.runClient(examples, s.address(), "-rpc", "unary", "-delay-ms", "400", "-cancel-after", "50ms");
      ExampleApps.runClient(examples, s.address(), "-rpc", "bidi", "-delay-ms", "400", "-cancel-after", "50ms");
      ExampleApps.runClient(examples, s.address(), "-rpc", "unary", "-delay-ms", "400", "-deadline", "60ms");
      ExampleApps.runClient(examples, s.address(), "-rpc", "server-stream", "-delay-ms", "400", "-deadline", "60ms");
      List<Stream> all = streams(session.pollUntil(endsSeen(4, 4), 10_000));
      List<Stream> clients = all.stream().filter(x -> x.side() == Side.CLIENT).collect(Collectors.toList());
      assertThat(clients).hasSize(4);
      for (int i = 0; i < clients.size(); i++) {
        Stream c = clients.get(i);
        assertThat(c.shape()).isEqualTo(CLIENT_STREAMS);
        boolean cancelled = i < 2;
        assertThat(c.last().header("grpc-status")).isEqualTo(cancelled ? "1" : "4");
        long ms = (c.last().monotonicNs() - c.events().get(0).monotonicNs()) / 1_000_000;
        // ended when the caller gave up: 50 or 60 ms after the start, long before the server's 400 ms
        assertThat(ms).as("%s lasted", c).isBetween(cancelled ? 45L : 55L, 300L);
        Stream sv = peer(c, all);
        assertThat(sv.shape()).isEqualTo(SERVER_STREAMS);
        assertThat(sv.last().header("grpc-status")).isIn("1", "4"); // what the handler saw its ctx end with
      }
      assertThat(session.probes.counters().get(GrpcProbe.HTTP2_CLIENT_CLOSE_STREAM).hits()).isEqualTo(4);
    }
  }

  /**
   * A response that is no gRPC one (HTTP 503, no grpc-status: a proxy or another server in the way)
   * ends the client stream with the code grpc-go maps it to: the streams set's closeStream carries
   * UNAVAILABLE itself; the headers set carries the :status, which span assembly maps the same way.
   */
  /**
   * A stripped binary whose grpc-go release the offsets catalog knows, but without the streams set's
   * fields (a catalog generated before the set, as a catalog regenerated only in part would be): the binary's
   * own type information and code give them ({@code Stream.method} by name, closeStream's and writeStatus's
   * arguments named by their catalogued layouts), so it still gets the streams set. Without those layouts
   * too, nothing names closeStream's arguments: the binary gets the headers set, which the catalog covers,
   * says why (what {@code gospan inspect} prints after "probe set:"), and its calls are traced with the
   * headers set's events.
   */
  @Test
  void aStrippedBinaryWhoseCatalogLacksTheStreamsSetsFieldsIsTracedWithTheHeadersSet() throws Exception {
    Path stripped = ExampleApps.build("--stripped");
    io.gospan.offsets.catalog.OffsetsCatalog withoutFields = catalogWithout(STREAMS_SET_FIELDS);
    for (String program : List.of("greeter-server", "greeter-client")) {
      BinaryInspection own;
      try (io.gospan.offsets.GoBinary b = io.gospan.offsets.GoBinary.open(stripped.resolve(program))) {
        own = BinaryInspection.inspect(stripped.resolve(program), b, io.gospan.offsets.resolve.Preference.DWARF, false, withoutFields);
      }
      assertThat(own.probeSet()).as("%s: %s", program, own.probeSetReason()).isEqualTo(Probe.ProbeSet.STREAMS);
      assertThat(own.resolution().orElseThrow().values().get(io.gospan.offsets.resolve.ProbeField.STREAM_METHOD).source())
          .isEqualTo(io.gospan.offsets.resolve.FieldValue.Source.TYPEINFO);
    }
    List<String> withLayouts = new java.util.ArrayList<>(STREAMS_SET_FIELDS);
    withLayouts.addAll(List.of("layout:http2_client_close_stream", "layout:http2_server_write_status"));
    io.gospan.offsets.catalog.OffsetsCatalog older = catalogWithout(withLayouts);
    try (ProbeSession session = new ProbeSession(ProbeSession.STREAMS).withCatalog(older)) {
      for (String program : List.of("greeter-server", "greeter-client")) {
        BinaryInspection i = session.inspect(stripped.resolve(program));
        assertThat(i.registerAbi()).isTrue();
        assertThat(i.probeSet()).as(program).isEqualTo(Probe.ProbeSet.HEADERS);
        assertThat(i.probeSetReason()).as(program).startsWith("http2_client_close_stream ")
            .contains("the catalog has no argument layout of (*http2Client).closeStream");
        // the embedded catalog has them: the same binary gets the streams set
        assertThat(new ProbeSession(ProbeSession.STREAMS).inspect(stripped.resolve(program)).probeSet())
            .as(program).isEqualTo(Probe.ProbeSet.STREAMS);
      }
      session.trace(stripped.resolve("greeter-server")).trace(stripped.resolve("greeter-client"));
      try (ExampleApps.Server s = ExampleApps.startServer(stripped)) {
        ExampleApps.runClient(stripped, s.address(), "-rpc", "unary", "-n", "2");
        ExampleApps.runClient(stripped, s.address(), "-rpc", "unary", "-fail-code", "NOT_FOUND");
        List<Stream> all = streams(session.pollUntil(endsSeen(3, 3), 10_000));
        List<Stream> clients = all.stream().filter(x -> x.side() == Side.CLIENT).collect(Collectors.toList());
        assertThat(clients).as("client streams").hasSize(3);
        assertThat(all).as("all streams").hasSize(6);
        for (int i = 0; i < clients.size(); i++) {
          Stream c = clients.get(i);
          Stream sv = peer(c, all);
          // request-only capture: the response headers before the trailers are skipped in the kernel
          assertThat(c.shape()).isEqualTo(CLIENT_TRAILERS_ONLY);
          assertThat(sv.shape()).isEqualTo(SERVER_TRAILERS_ONLY);
          assertThat(c.events().get(0).header(":path")).isEqualTo(SAY_HELLO);
          assertThat(c.last().header("grpc-status")).isEqualTo(i < 2 ? "0" : "5");
          assertThat(sv.last().header("grpc-status")).isEqualTo(i < 2 ? "0" : "5");
        }
      }
    }
  }

  /** The members only the streams set reads (struct go_offsets, "The streams set"). */
  static final List<String> STREAMS_SET_FIELDS = List.of("stream_method", "status_s", "close_stream_t", "close_stream_s",
      "close_stream_st", "write_status_t", "write_status_s", "write_status_st");

  /** The embedded offsets catalog without these fields in any section. */
  static io.gospan.offsets.catalog.OffsetsCatalog catalogWithout(List<String> fields) throws Exception {
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    JsonNode root;
    try (java.io.InputStream in = io.gospan.offsets.catalog.OffsetsCatalog.class.getResourceAsStream(
        io.gospan.offsets.catalog.OffsetsCatalog.RESOURCE)) {
      root = json.readTree(in);
    }
    int removed = 0;
    for (JsonNode section : root.path("sections")) {
      for (String f : fields) {
        if (((com.fasterxml.jackson.databind.node.ObjectNode) section.path("fields")).remove(f) != null) {
          removed++;
        }
      }
    }
    assertThat(removed).as("fields removed from the catalog").isGreaterThanOrEqualTo(fields.size());
    return io.gospan.offsets.catalog.OffsetsCatalog.parse(new java.io.ByteArrayInputStream(json.writeValueAsBytes(root)));
  }

  @Test
  void anHttpStatusWithoutGrpcStatusGivesTheCodeGrpcGoMapsItTo() throws Exception {
    for (HeaderNames names : List.of(ProbeSession.STREAMS, ProbeSession.ALL_EVENTS)) {
      try (ProbeSession session = new ProbeSession(names).trace(examples.resolve("greeter-client"));
          ExampleApps.Server s = ExampleApps.startServer(examples, "-http-handler", "-http-status", "503")) {
        ExampleApps.runClient(examples, s.address(), "-rpc", "unary", "-n", "2", "-expect", "UNAVAILABLE");
        List<Stream> clients = streams(session.pollUntil(endsSeen(2, 0), 10_000)).stream()
            .filter(x -> x.side() == Side.CLIENT).collect(Collectors.toList());
        assertThat(clients).hasSize(2);
        for (Stream c : clients) {
          if (names == ProbeSession.STREAMS) {
            assertThat(c.shape()).isEqualTo(CLIENT_STREAMS);
            assertThat(c.last().header("grpc-status")).isEqualTo("14");
            assertThat(c.last().header("grpc-message")).contains("503");
          } else {
            assertThat(c.shape()).isEqualTo(List.of("LOOPY_WRITER_WRITE_HEADER", "HTTP2_CLIENT_OPERATE_HEADERS+END"));
            assertThat(c.last().header(":status")).isEqualTo("503");
            assertThat(c.last().header("grpc-status")).isNull();
          }
        }
      }
    }
  }

  /**
   * With the default header names the response headers before the trailers are not recorded:
   * each side's hit on them returns early (2 of a unary call's 6 hits), and spans still get
   * their start and end. The headers set with the default names: a Go 1.16 binary's.
   */
  @Test
  void byDefaultResponseHeadersBeforeTheTrailersAreSkipped() throws Exception {
    Path go116 = ExampleApps.build("--go", "1.16.15", "--grpc", "v1.40.0");
    try (ProbeSession session = new ProbeSession(HeaderNames.defaults())
            .trace(go116.resolve("greeter-server")).trace(go116.resolve("greeter-client"));
        ExampleApps.Server s = ExampleApps.startServer(go116)) {
      assertThat(session.inspect(go116.resolve("greeter-server")).probeSet()).isEqualTo(Probe.ProbeSet.HEADERS);
      ExampleApps.runClient(go116, s.address(), "-rpc", "unary", "-n", "3");
      ExampleApps.runClient(go116, s.address(), "-rpc", "unary", "-fail-code", "NOT_FOUND");
      List<Stream> all = streams(session.pollUntil(endsSeen(4, 4), 10_000));
      List<Stream> clients = all.stream().filter(x -> x.side() == Side.CLIENT).collect(Collectors.toList());
      assertThat(clients).hasSize(4);
      assertThat(all).hasSize(8);
      for (Stream c : clients) {
        Stream sv = peer(c, all);
        assertThat(c.shape()).isEqualTo(CLIENT_TRAILERS_ONLY); // request headers, trailers
        assertThat(sv.shape()).isEqualTo(SERVER_TRAILERS_ONLY);
        assertThat(c.last().header("grpc-status")).isEqualTo(sv.last().header("grpc-status"));
        // what spans need, and nothing else: no user-agent, no content-type
        for (HeaderEvent request : List.of(c.events().get(0), sv.events().get(0))) {
          assertThat(request.fields()).extracting(HeaderField::name).containsExactlyInAnyOrder(":path", ":authority");
        }
      }
      Map<GrpcProbe, ProbeCounters> counters = session.probes.counters();
      // the 3 OK calls had response headers before their trailers, on each side
      assertThat(counters.get(GrpcProbe.LOOPY_WRITER_WRITE_HEADER).skipped()).isEqualTo(3);
      assertThat(counters.get(GrpcProbe.HTTP2_CLIENT_OPERATE_HEADERS).skipped()).isEqualTo(3);
      assertThat(counters.get(GrpcProbe.HTTP2_SERVER_OPERATE_HEADERS).skipped()).isZero();
      for (GrpcProbe p : List.of(GrpcProbe.LOOPY_WRITER_WRITE_HEADER, GrpcProbe.HTTP2_CLIENT_OPERATE_HEADERS, GrpcProbe.HTTP2_SERVER_OPERATE_HEADERS)) {
        assertThat(counters.get(p).hits()).as("%s", p).isEqualTo(counters.get(p).eventsSent() + counters.get(p).skipped());
      }
    }
  }

  /**
   * Header names in a binary's read-only data (grpc-go's literals, hpack's static table) are read
   * once, then known by their address: every cached address must hold the name its id says (or
   * a name not captured), and the fields stay right on the calls that used the cache.
   */
  @Test
  void headerNamesInReadOnlyDataAreKnownByAddressAfterTheirFirstRead() throws Exception {
    // a response name no call carries: the headers set, which reads every block's names
    HeaderNames names = HeaderNames.of(List.of("x-gospan-test"));
    Path server = examples.resolve("greeter-server");
    Path client = examples.resolve("greeter-client");
    try (ProbeSession session = new ProbeSession(names).trace(server).trace(client);
        ExampleApps.Server s = ExampleApps.startServer(examples)) {
      ExampleApps.runClient(examples, s.address(), "-rpc", "unary", "-n", "4");
      List<Stream> all = streams(session.pollUntil(endsSeen(4, 4), 10_000));
      assertThat(all).hasSize(8);
      for (Stream st : all) {
        assertThat(st.events().get(0).header(":path")).isEqualTo(SAY_HELLO);
        assertThat(st.events().get(0).header(":authority")).isEqualTo(s.address());
        assertThat(st.last().header("grpc-status")).isEqualTo("0");
      }
      for (Path binary : List.of(server, client)) {
        List<String> cached = new ArrayList<>();
        try (GoBinary g = GoBinary.open(binary)) {
          long[] readOnly = g.elf().readOnlyData().orElseThrow();
          for (long entry : session.probes.nameCache(ExeKey.of(binary))) {
            if (entry == 0) {
              continue;
            }
            long address = entry >>> 13;
            int length = (int) (entry >> 8) & 31;
            int id = (int) (entry & 0xff);
            assertThat(address).as("%s: cached address", binary).isBetween(readOnly[0], readOnly[1] - length);
            String name = StandardCharsets.US_ASCII.decode(g.elf().readAddress(address, length)).toString();
            if (id == 255) {
              assertThat(names.names()).as("%s: %s cached as not captured", binary, name).doesNotContain(name);
            } else {
              assertThat(names.name(id)).as("%s: id %d at 0x%x", binary, id, address).isEqualTo(name);
            }
            cached.add(name);
          }
        }
        // grpc-go's own literals on the client, hpack's static table on the server; the cache is
        // direct-mapped, so which names stay depends on their addresses
        assertThat(cached).as("%s", binary).hasSizeGreaterThanOrEqualTo(3).containsAnyOf(":path", ":authority");
      }
    }
  }

  /**
   * A probe finds its binary's offsets through the slot its attach cookie names. A slot freed
   * and given to another binary, while the old binary's probes are still attached, is not taken
   * for theirs (the generation differs): they fall back to the executable's offsets, found only
   * while that binary is registered.
   */
  @Test
  void aFreedSlotGivenToAnotherBinaryIsNotUsedByTheProbesOfTheFirst() throws Exception {
    Path server = examples.resolve("greeter-server");
    Path client = examples.resolve("greeter-client");
    try (ProbeSession session = new ProbeSession(HeaderNames.defaults()).trace(server);
        ExampleApps.Server s = ExampleApps.startServer(examples)) {
      assertThat(session.probes.removeBinary(ExeKey.of(server))).isTrue(); // its probes stay attached
      session.trace(client); // takes the freed slot
      ExampleApps.runClient(examples, s.address(), "-rpc", "unary", "-n", "2");
      List<HeaderEvent> events = session.pollUntil(endsSeen(2, 0), 10_000);
      assertThat(events).isNotEmpty().allSatisfy(e -> {
        assertThat(e.side()).isEqualTo(Side.CLIENT);
        assertThat(e.pid()).isNotEqualTo((int) s.pid());
      });
      assertThat(session.probes.counters().get(GrpcProbe.HTTP2_SERVER_OPERATE_HEADERS).noOffsets()).isEqualTo(2);

      session.events.clear();
      session.trace(server); // registered again, in another slot: found through the executable
      ExampleApps.runClient(examples, s.address(), "-rpc", "unary", "-n", "2");
      List<HeaderEvent> again = session.pollUntil(endsSeen(2, 2), 10_000);
      assertThat(again).filteredOn(e -> e.pid() == (int) s.pid()).extracting(HeaderEvent::probe)
          .contains(ProbeKind.HTTP2_SERVER_OPERATE_HEADERS, ProbeKind.HTTP2_SERVER_WRITE_STATUS);
    }
  }

  /**
   * Kernels without a BTF task pointer (< 5.11) or bpf_rdonly_cast (< 6.2) run the CO-RE
   * fallback paths of grpc.bpf.c; this kernel would pick the fast paths, so a build with only
   * the fallbacks is loaded and must trace the same.
   */
  @Test
  void theFallbackPathsForOlderKernelsTraceTheSame() throws Exception {
    checkUnary(() -> new ProbeSession("test/grpc_compat.bpf.o", ProbeSession.ALL_EVENTS), examples, "tls");
  }

  @Test
  void tlsConnectionsAreIdentifiedThroughCryptoTlsConn() throws Exception {
    checkUnary(examples, "tls");
  }

  @Test
  void stackAbiBinariesOfGo116AreTracedToo() throws Exception {
    checkUnary(ExampleApps.build("--go", "1.16.15", "--grpc", "v1.40.0"));
  }

  @Test
  void theOldestRegisterAbiGo117IsTracedToo() throws Exception {
    // Go 1.17's DWARF puts some register arguments in their spill slots at the entry pc: the
    // resolver derives them from the calling convention instead.
    checkUnary(ExampleApps.build("--go", "1.17.13", "--grpc", "v1.40.0"));
  }

  @Test
  void oldAndNewGrpcGoVersionsAreTraced() throws Exception {
    checkUnary(ExampleApps.build("--go", "1.22.12", "--grpc", "v1.60.1"));
  }

  @Test
  void everyStreamingShapeHasItsStartAndEnd() throws Exception {
    try (ProbeSession session = new ProbeSession().trace(examples.resolve("greeter-server")).trace(examples.resolve("greeter-client"));
        ExampleApps.Server s = ExampleApps.startServer(examples)) {
      for (String rpc : List.of("server-stream", "client-stream", "bidi")) {
        ExampleApps.runClient(examples, s.address(), "-rpc", rpc, "-n", "2");
      }
      ExampleApps.runClient(examples, s.address(), "-rpc", "server-stream", "-fail-code", "NOT_FOUND", "-fail-after", "2");
      List<Stream> all = streams(session.pollUntil(endsSeen(7, 7), 10_000));
      List<Stream> clients = all.stream().filter(x -> x.side() == Side.CLIENT).collect(Collectors.toList());
      assertThat(clients).hasSize(7);
      assertThat(clients)
          .extracting(c -> c.events().get(0).header(":path"))
          .containsExactly(
              "/greeter.Greeter/SayHelloServerStream", "/greeter.Greeter/SayHelloServerStream",
              "/greeter.Greeter/SayHelloClientStream", "/greeter.Greeter/SayHelloClientStream",
              "/greeter.Greeter/SayHelloBidi", "/greeter.Greeter/SayHelloBidi",
              "/greeter.Greeter/SayHelloServerStream");
      for (Stream c : clients) {
        Stream sv = peer(c, all);
        assertThat(c.shape()).isEqualTo(CLIENT_OK);
        assertThat(sv.shape()).isEqualTo(SERVER_OK);
      }
      // the stream that failed after two messages: headers first, then error trailers
      assertThat(clients.get(6).last().header("grpc-status")).isEqualTo("5");
    }
  }

  @Test
  void everyStreamingShapeHasOneStartAndOneEndInTheStreamsSet() throws Exception {
    try (ProbeSession session = new ProbeSession(ProbeSession.STREAMS)
            .trace(examples.resolve("greeter-server")).trace(examples.resolve("greeter-client"));
        ExampleApps.Server s = ExampleApps.startServer(examples)) {
      for (String rpc : List.of("server-stream", "client-stream", "bidi")) {
        ExampleApps.runClient(examples, s.address(), "-rpc", rpc, "-n", "2");
      }
      ExampleApps.runClient(examples, s.address(), "-rpc", "server-stream", "-fail-code", "NOT_FOUND", "-fail-after", "2");
      List<Stream> all = streams(session.pollUntil(endsSeen(7, 7), 10_000));
      List<Stream> clients = all.stream().filter(x -> x.side() == Side.CLIENT).collect(Collectors.toList());
      assertThat(clients).hasSize(7);
      assertThat(clients)
          .extracting(c -> c.events().get(0).header(":path"))
          .containsExactly(
              "/greeter.Greeter/SayHelloServerStream", "/greeter.Greeter/SayHelloServerStream",
              "/greeter.Greeter/SayHelloClientStream", "/greeter.Greeter/SayHelloClientStream",
              "/greeter.Greeter/SayHelloBidi", "/greeter.Greeter/SayHelloBidi",
              "/greeter.Greeter/SayHelloServerStream");
      for (Stream c : clients) {
        assertThat(c.shape()).isEqualTo(CLIENT_STREAMS);
        assertThat(peer(c, all).shape()).isEqualTo(SERVER_STREAMS);
      }
      assertThat(clients.get(6).last().header("grpc-status")).isEqualTo("5");
      assertThat(session.probes.counters().get(GrpcProbe.HTTP2_CLIENT_CLOSE_STREAM).hits()).isEqualTo(7);
    }
  }

  @Test
  void aThousandConcurrentCallsOverFiftyConnectionsAreNeverMisattributed() throws Exception {
    thousandCalls(new ProbeSession(), CLIENT_OK, SERVER_OK);
  }

  @Test
  void aThousandConcurrentCallsAreNeverMisattributedInTheStreamsSet() throws Exception {
    thousandCalls(new ProbeSession(ProbeSession.STREAMS), CLIENT_STREAMS, SERVER_STREAMS);
  }

  static void thousandCalls(ProbeSession probeSession, List<String> clientShape, List<String> serverShape) throws Exception {
    try (ProbeSession session = probeSession.trace(examples.resolve("greeter-server")).trace(examples.resolve("greeter-client"));
        ExampleApps.Server s = ExampleApps.startServer(examples)) {
      JsonNode summary =
          ExampleApps.runClient(examples, s.address(), "-rpc", "unary", "-n", "1000", "-concurrency", "100", "-conns", "50");
      assertThat(summary.path("codes").path("OK").asInt()).isEqualTo(1000);
      List<Stream> all = streams(session.pollUntil(endsSeen(1000, 1000), 30_000));
      List<Stream> clients = all.stream().filter(x -> x.side() == Side.CLIENT).collect(Collectors.toList());
      List<Stream> servers = all.stream().filter(x -> x.side() == Side.SERVER).collect(Collectors.toList());
      assertThat(clients).hasSize(1000);
      assertThat(servers).hasSize(1000);
      assertThat(clients.stream().map(Stream::connId).distinct()).hasSize(50);
      assertThat(servers.stream().map(Stream::connId).distinct()).hasSize(50);
      for (Stream c : clients) {
        assertThat(c.shape()).isEqualTo(clientShape);
        assertThat(c.events().get(0).sockets()).isNotNull();
        Stream sv = peer(c, all);
        assertThat(sv.shape()).isEqualTo(serverShape);
        assertThat(sv.events().get(0).sockets()).isNotNull();
      }
      assertThat(session.probes.counters().values()).allSatisfy(pc -> assertThat(pc.ringBufferFull()).isZero());
    }
  }

  @Test
  void anAuthorizationHeaderNeverLeavesTheKernel() throws Exception {
    authorizationStaysInTheKernel(new ProbeSession(), 6);
  }

  @Test
  void anAuthorizationHeaderNeverLeavesTheKernelInTheStreamsSet() throws Exception {
    authorizationStaysInTheKernel(new ProbeSession(ProbeSession.STREAMS), 4);
  }

  static void authorizationStaysInTheKernel(ProbeSession probeSession, int eventsPerCall) throws Exception {
    String secret = "s3cr3t-gospan-token";
    try (ProbeSession session = probeSession.trace(examples.resolve("greeter-server")).trace(examples.resolve("greeter-client"));
        ExampleApps.Server s = ExampleApps.startServer(examples)) {
      ExampleApps.runClient(
          examples, s.address(), "-rpc", "unary", "-n", "3", "-header", "authorization=Bearer " + secret,
          "-header", "cookie=session=" + secret, "-header", "x-custom=" + secret);
      List<HeaderEvent> events = session.pollUntil(endsSeen(3, 3), 10_000);
      assertThat(events).hasSize(3 * eventsPerCall);
      byte[] needle = secret.getBytes(StandardCharsets.US_ASCII);
      synchronized (session.raw) {
        assertThat(session.raw).hasSize(3 * eventsPerCall);
        for (byte[] record : session.raw) {
          assertThat(indexOf(record, needle)).as("secret in a raw ring buffer record").isEqualTo(-1);
          assertThat(indexOf(record, "Bearer".getBytes(StandardCharsets.US_ASCII))).isEqualTo(-1);
        }
      }
      assertThat(events).allSatisfy(e -> assertThat(e.fields()).noneMatch(f -> f.name().equals("authorization")));
    }
  }

  static int indexOf(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
