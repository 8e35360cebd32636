package io.gospan.receiver.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.discovery.BinaryInspection;
import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.StreamParent;
import io.gospan.receiver.event.StreamParentVia;
import io.gospan.receiver.testing.ExampleApps;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * In-process propagation on real processes, real BPF: greeter-client -> greeter-relay ->
 * greeter-server, all traced. For every call the relay serves, it calls the server twice (in the
 * handler's goroutine with the handler's ctx, and in an errgroup goroutine with the group's ctx),
 * and a background loop calls it with {@code context.Background()} (examples/cmd/greeter-relay).
 * The relay's client streams made for a served call must each get a {@link StreamParent} naming
 * exactly that call's server stream (as the relay's own server-side header events identify it:
 * connection, stream id); the background calls none. A stripped build is linked through the
 * offsets catalog and the ctx walk.
 */
class InProcessPropagationIT {

  static Path bin;

  @BeforeAll
  static void binaries() {
    Path b = ExampleApps.repoRoot().resolve("examples/bin");
    bin = Files.isExecutable(b.resolve("greeter-relay")) ? b : ExampleApps.build();
  }

  /** A running greeter-relay on 127.0.0.1 and a free port; closing it stops it. */
  record Relay(Process process, String address) implements AutoCloseable {
    long pid() {
      return process.pid();
    }

    @Override
    public void close() throws InterruptedException {
      process.destroy();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  static Relay startRelay(Path dir, String upstream, String background) throws Exception {
    List<String> cmd = List.of(dir.resolve("greeter-relay").toString(), "-addr", "127.0.0.1:0", "-upstream", upstream,
        "-background", background);
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String first = CompletableFuture.supplyAsync(() -> {
      try {
        return r.readLine();
      } catch (IOException e) {
        return null;
      }
    }).get(30, TimeUnit.SECONDS);
    if (first == null || !first.startsWith("listening on ")) {
      p.destroyForcibly();
      throw new AssertionError("greeter-relay did not report its address; first line: " + first);
    }
    CompletableFuture.runAsync(() -> {
      try {
        while (r.readLine() != null) {
          // drain
        }
      } catch (IOException ignored) {
        // exited
      }
    });
    return new Relay(p, first.substring("listening on ".length()).strip());
  }

  /** One stream of one process: its first event's time, last event's time (its end when ended). */
  static final class Stream {
    final int pid;
    final long conn;
    final int id;
    final String path;
    final long start;
    long end = Long.MAX_VALUE;

    Stream(HeaderEvent first) {
      this.pid = first.pid();
      this.conn = first.connectionId();
      this.id = first.streamId();
      this.path = first.header(":path");
      this.start = first.monotonicNs();
    }

    boolean contains(long ts) {
      return ts >= start && ts <= end;
    }

    @Override
    public String toString() {
      return "stream " + id + " of conn 0x" + Long.toHexString(conn) + " " + path;
    }
  }

  /**
   * The streams of one process and side, in start order: a stream starts with {@code startKind}
   * (a new stream on a key seen before begins a new stream: connection addresses are reused) and
   * ends with an END_STREAM event of {@code endKind}.
   */
  static List<Stream> streams(List<HeaderEvent> events, long pid, Side side, ProbeKind startKind, ProbeKind endKind) {
    Map<List<Object>, Stream> current = new HashMap<>();
    List<Stream> all = new ArrayList<>();
    for (HeaderEvent e : events) {
      if (e.pid() != pid || e.side() != side) {
        continue;
      }
      List<Object> key = List.of(e.connectionId(), e.streamId());
      if (e.probe() == startKind && !e.endStream()) {
        Stream s = new Stream(e);
        current.put(key, s);
        all.add(s);
      } else if (e.probe() == endKind && e.endStream() && current.containsKey(key)) {
        current.get(key).end = e.monotonicNs();
      }
    }
    return all;
  }

  /** What {@link #relayEveryKind} saw: the relay's pid, all events, all StreamParents, the greeter calls it served. */
  record RelayRun(long relayPid, List<HeaderEvent> events, List<StreamParent> parents, List<Stream> served) {}

  /**
   * Starts the relay of {@code dir} in front of {@code upstream} (background calls every 50 ms),
   * drives {@code perKind} calls of each of the four kinds through it with the example client,
   * stops it, and returns what the session collected.
   */
  /** Where a stream starts and ends in a probe set: client start, client end, server start, server end. */
  static ProbeKind[] kinds(Probe.ProbeSet set) {
    return set == Probe.ProbeSet.STREAMS
        ? new ProbeKind[] {ProbeKind.HTTP2_CLIENT_NEW_STREAM, ProbeKind.HTTP2_CLIENT_CLOSE_STREAM,
            ProbeKind.HTTP2_SERVER_OPERATE_HEADERS, ProbeKind.HTTP2_SERVER_WRITE_STATUS}
        : new ProbeKind[] {ProbeKind.LOOPY_WRITER_WRITE_HEADER, ProbeKind.HTTP2_CLIENT_OPERATE_HEADERS,
            ProbeKind.HTTP2_SERVER_OPERATE_HEADERS, ProbeKind.LOOPY_WRITER_WRITE_HEADER};
  }

  static RelayRun relayEveryKind(ProbeSession session, Path dir, String upstream, int perKind) throws Exception {
    return relayEveryKind(session, dir, upstream, perKind, Probe.ProbeSet.HEADERS);
  }

  static RelayRun relayEveryKind(ProbeSession session, Path dir, String upstream, int perKind, Probe.ProbeSet set)
      throws Exception {
    long relayPid;
    try (Relay relay = startRelay(dir, upstream, "50ms")) {
      relayPid = relay.pid();
      for (String kind : List.of("unary", "server-stream", "client-stream", "bidi")) {
        ExampleApps.runClient(bin, relay.address(), "-rpc", kind, "-n", Integer.toString(perKind));
      }
      session.pollUntil(e -> false, 1000);
    }
    List<HeaderEvent> events = session.pollUntil(e -> false, 300);
    List<StreamParent> parents;
    synchronized (session.parents) {
      parents = new ArrayList<>(session.parents);
    }
    List<Stream> served = streams(events, relayPid, Side.SERVER, kinds(set)[2], kinds(set)[3]);
    served.removeIf(s -> s.path == null || !s.path.startsWith("/greeter.Greeter/"));
    return new RelayRun(relayPid, events, parents, served);
  }

  static Map<GrpcProbe, Long> hits(GrpcProbes probes) {
    Map<GrpcProbe, Long> out = new EnumMap<>(GrpcProbe.class);
    probes.counters().forEach((p, c) -> out.put(p, c.hits()));
    return out;
  }

  @Test
  void relayClientStreamsNameTheServerStreamTheyAreMadeFor() throws Exception {
    linking(new ProbeSession(), Probe.ProbeSet.HEADERS, bin);
  }

  @Test
  void relayClientStreamsNameTheServerStreamTheyAreMadeForInTheStreamsSet() throws Exception {
    linking(new ProbeSession(ProbeSession.STREAMS), Probe.ProbeSet.STREAMS, bin);
  }

  /**
   * grpc-go v1.40 built with Go 1.17: NewStream copies the stream into its named result before a deferred
   * call, so its probe reads the stream's own slot on a jump before that copy (ResultPlaces); entry probes
   * sit on the stack-check jbe (Go &lt;= 1.20's frame setup would be single-stepped).
   */
  @Test
  void inTheStreamsSetGrpcGo140WithGo117() throws Exception {
    linking(new ProbeSession(ProbeSession.STREAMS), Probe.ProbeSet.STREAMS,
        ExampleApps.build("--go", "1.17.13", "--grpc", "v1.40.0"));
  }

  static void linking(ProbeSession probeSession, Probe.ProbeSet set, Path bin) throws Exception {
    Path server = bin.resolve("greeter-server");
    Path relayBin = bin.resolve("greeter-relay");
    BinaryInspection relayInspection = probeSession.inspect(relayBin);
    assertThat(relayInspection.probeSet()).isEqualTo(set);
    assertThat(relayInspection.inProcessLinking()).startsWith("yes (ctx walk, goroutine");
    List<Long> places = relayInspection.plans().get(Probe.HTTP2_CLIENT_NEW_STREAM).returns();
    BinaryInspection.Returns returns = relayInspection.newStreamReturns().orElseThrow();
    // grpc-go v1.85 returns a new stream at one RET, reloading it from its stack slot: the probe sits on
    // an emulated jump before it (ResultPlaces); the hits below show it is hit once per stream
    assertThat(returns.slot()).as("NewStream's result slot (%s)", returns.whyRets()).isPositive();
    assertThat(places).as("NewStream's probe places").hasSize(1);
    System.out.printf("greeter-relay (%s, grpc-go %s): NewStream probed at %d emulated jump, the stream at [rsp + 0x%x]%n",
        relayInspection.goVersion(), relayInspection.grpcVersionOrUnknown(), places.size(), returns.slot());

    try (ProbeSession session = probeSession;
        ExampleApps.Server upstream = ExampleApps.startServer(bin)) {
      session.trace(server).trace(relayBin).trace(bin.resolve("greeter-client"));
      assertThat(session.attacher.binary(ExeKey.of(relayBin)).orElseThrow().attached())
          .containsAll(Probe.inProcessLinking());

      // Hits per unary call, no background calls: client -> relay -> server, all three traced.
      int n = 200;
      try (Relay relay = startRelay(bin, upstream.address(), "0")) {
        ExampleApps.runClient(bin, relay.address(), "-rpc", "unary", "-n", "5"); // connections up
        session.pollUntil(e -> false, 300);
        Map<GrpcProbe, Long> before = hits(session.probes);
        ExampleApps.runClient(bin, relay.address(), "-rpc", "unary", "-n", Integer.toString(n));
        session.pollUntil(e -> false, 300);
        Map<GrpcProbe, Long> after = hits(session.probes);
        System.out.printf("%s set: probe hits per unary call (client -> relay -> server, 3 processes traced, %d calls):%n",
            set.name().toLowerCase(java.util.Locale.ROOT), n);
        long all = 0;
        for (GrpcProbe p : GrpcProbe.values()) {
          long d = after.get(p) - before.get(p);
          all += d;
          if (d > 0) {
            System.out.printf("  %-30s %.2f%n", p.name().toLowerCase(java.util.Locale.ROOT), (double) d / n);
          }
        }
        // 3 streams per client call (client -> relay, relay -> server twice), each with a client and a server end
        System.out.printf("  per stream, both ends together: %.2f hits%n", all / (3.0 * n));
        // Per client call the relay serves 1 call and the server 2 (handleStream: 3 hits); the
        // client makes 1 stream and the relay 2 (NewStream: 3 hits, at the jump before its success RET).
        // A margin of 5 for what else grpc-go may do meanwhile.
        assertThat(after.get(GrpcProbe.SERVER_HANDLE_STREAM) - before.get(GrpcProbe.SERVER_HANDLE_STREAM))
            .isBetween(3L * n, 3L * n + 5);
        assertThat(after.get(GrpcProbe.HTTP2_CLIENT_NEW_STREAM) - before.get(GrpcProbe.HTTP2_CLIENT_NEW_STREAM))
            .isBetween(3L * n, 3L * n + 5);
        if (set == Probe.ProbeSet.STREAMS) {
          // a client stream: NewStream, closeStream (once: past its guard); a server stream:
          // operateHeaders, handleStream, writeStatus
          for (GrpcProbe p : List.of(GrpcProbe.HTTP2_CLIENT_CLOSE_STREAM, GrpcProbe.HTTP2_SERVER_OPERATE_HEADERS,
              GrpcProbe.HTTP2_SERVER_WRITE_STATUS)) {
            assertThat(after.get(p) - before.get(p)).as("%s", p).isBetween(3L * n, 3L * n + 5);
          }
          assertThat(all).as("hits per stream, both ends").isBetween(5L * 3 * n, 5L * 3 * n + 15);
        }
      }
      session.events.clear();
      session.parents.clear();

      // Linking: every kind of call, background calls every 50 ms alongside.
      int perKind = 100;
      RelayRun run = relayEveryKind(session, bin, upstream.address(), perKind, set);
      long relayPid = run.relayPid();
      List<HeaderEvent> events = run.events();
      List<StreamParent> parents = run.parents();
      List<Stream> served = run.served();
      List<Stream> calls = streams(events, relayPid, Side.CLIENT, kinds(set)[0], kinds(set)[1]);
      assertThat(served).as("calls the relay served").hasSize(4 * perKind);

      Map<List<Object>, StreamParent> parentOf = new HashMap<>();
      Map<StreamParentVia, Integer> via = new EnumMap<>(StreamParentVia.class);
      for (StreamParent p : parents) {
        if (p.pid() == relayPid) {
          parentOf.put(List.of(p.connectionId(), p.streamId()), p);
          via.merge(p.via(), 1, Integer::sum);
        }
      }
      // the served stream a parent names: the latest one with its key started before the parent
      Map<Stream, Integer> linkedTo = new HashMap<>();
      int wrong = 0;
      List<String> wrongOnes = new ArrayList<>();
      int background = 0;
      int backgroundWithParent = 0;
      int unknownClientStream = 0;
      for (StreamParent p : parentOf.values()) {
        boolean known = calls.stream().anyMatch(c -> c.conn == p.connectionId() && c.id == p.streamId());
        if (!known) {
          unknownClientStream++;
        }
      }
      for (Stream c : calls) {
        StreamParent p = parentOf.get(List.of(c.conn, c.id));
        Stream window = served.stream().filter(s -> s.path.equals(c.path) && s.contains(c.start)).findFirst().orElse(null);
        if (p == null) {
          if (window == null) {
            background++;
          }
          continue;
        }
        Stream named = null;
        for (Stream s : served) {
          if (s.conn == p.parentConnectionId() && s.id == p.parentStreamId() && s.start <= p.monotonicNs()) {
            named = s; // the latest
          }
        }
        if (window == null) {
          background++;
          backgroundWithParent++;
          wrongOnes.add(c + " (background) names " + named);
          continue;
        }
        if (named == null || !named.contains(c.start)) {
          wrong++;
          wrongOnes.add(c + " names " + named + ", made during " + window);
          continue;
        }
        linkedTo.merge(named, 1, Integer::sum);
      }
      long complete = served.stream().filter(s -> linkedTo.getOrDefault(s, 0) == 2).count();
      System.out.printf("relay: %d served calls, %d client streams (%d background), %d StreamParents %s; "
              + "served calls with both upstream streams linked: %d (%.2f %%); wrong parents: %d; background with a parent: %d%n",
          served.size(), calls.size(), background, parentOf.size(), via, complete, 100.0 * complete / served.size(), wrong,
          backgroundWithParent);
      ProbeCounters newStream = session.probes.counters().get(GrpcProbe.HTTP2_CLIENT_NEW_STREAM);
      System.out.println("NewStream counters (client, relay, server processes together): " + newStream);
      assertThat(wrongOnes).as("client streams with a wrong parent").isEmpty();
      assertThat(unknownClientStream).as("StreamParents naming no client stream the relay's header events show").isZero();
      assertThat(background).as("background calls").isGreaterThan(20);
      assertThat(complete).as("served calls whose two upstream streams name them").isGreaterThanOrEqualTo(
          (long) Math.ceil(0.99 * served.size()));
      assertThat(via).as("both the handler's goroutine and the errgroup's ctx").containsKeys(
          StreamParentVia.GOROUTINE, StreamParentVia.CONTEXT);
      assertThat(newStream.noParent()).as("client streams without a parent were counted").isPositive();
    }
  }

  /**
   * The other stream layouts (grpc-go v1.40: *Stream with Stream.ct a pointer; v1.60: the same with
   * Go 1.22's parentGoid) on the example server and client of each build: no relay there (a
   * client stream made outside any handler gets no parent), so what is checked is that both
   * probes read every stream without a fault, skip nothing, and give up on none but for want of
   * a parent. Go 1.16 (stack ABI): neither probe is attached, and inspection says why.
   */
  @Test
  void otherLayoutsReadEveryStream() throws Exception {
    for (List<String> args : List.of(List.of("--go", "1.17.13", "--grpc", "v1.40.0"),
        List.of("--go", "1.19.13", "--grpc", "v1.40.0"), List.of("--go", "1.22.12", "--grpc", "v1.60.1"))) {
      Path dir = ExampleApps.build(args.toArray(new String[0]));
      String build = dir.getFileName().toString();
      BinaryInspection inspection = BinaryInspection.inspect(dir.resolve("greeter-server"), Preference.DWARF);
      System.out.println(build + ": calls linked inside the process: " + inspection.inProcessLinking());
      assertThat(inspection.inProcessLinking()).startsWith("yes (ctx walk, goroutine");
      try (ProbeSession session = new ProbeSession();
          ExampleApps.Server server = ExampleApps.startServer(dir)) {
        session.trace(dir.resolve("greeter-server")).trace(dir.resolve("greeter-client"));
        Map<GrpcProbe, ProbeCounters> before = session.probes.counters();
        int n = 20;
        ExampleApps.runClient(dir, server.address(), "-rpc", "all", "-n", Integer.toString(n));
        session.pollUntil(e -> false, 300);
        Map<GrpcProbe, ProbeCounters> after = session.probes.counters();
        for (GrpcProbe p : List.of(GrpcProbe.SERVER_HANDLE_STREAM, GrpcProbe.HTTP2_CLIENT_NEW_STREAM)) {
          ProbeCounters b = before.get(p);
          ProbeCounters a = after.get(p);
          assertThat(a.hits() - b.hits()).as("%s %s hits", build, p).isEqualTo(n);
          assertThat(a.readFailed() - b.readFailed()).as("%s %s read failures", build, p).isZero();
          assertThat(a.noOffsets() - b.noOffsets()).as("%s %s", build, p).isZero();
          assertThat(a.skipped() - b.skipped()).as("%s %s skipped (ServeHTTP streams, error returns)", build, p).isZero();
        }
        ProbeCounters nb = before.get(GrpcProbe.HTTP2_CLIENT_NEW_STREAM);
        ProbeCounters na = after.get(GrpcProbe.HTTP2_CLIENT_NEW_STREAM);
        assertThat(na.noParent() - nb.noParent()).as("%s: the client's streams have no parent", build).isEqualTo(n);
        assertThat(session.parents).isEmpty();
      }
    }
    BinaryInspection go116 = BinaryInspection.inspect(
        ExampleApps.repoRoot().resolve("examples/bin/go1.16.15-grpc1.40.0/greeter-server"), Preference.DWARF);
    System.out.println("go1.16.15-grpc1.40.0: calls linked inside the process: " + go116.inProcessLinking());
    assertThat(go116.inProcessLinking()).startsWith("no: ").contains("stack ABI");
    assertThat(go116.clientSpans() && go116.serverSpans()).isTrue();
  }

  /**
   * A stripped build (no DWARF): the stream layouts come from the offsets catalog, runtime.g's
   * goid does not (DWARF only), so every parent is found by the ctx walk, the handler's own
   * calls included.
   */
  @Test
  void strippedBuildsAreLinkedThroughTheCtxWalk() throws Exception {
    Path dir = ExampleApps.build("--stripped");
    Path relayBin = dir.resolve("greeter-relay");
    assertThat(relayBin).as("examples/build.sh --stripped builds the relay").isExecutable();
    BinaryInspection inspection = BinaryInspection.inspect(relayBin, Preference.DWARF);
    assertThat(inspection.probeSet()).as("the streams set from the catalog").isEqualTo(Probe.ProbeSet.STREAMS);
    String linking = inspection.inProcessLinking();
    System.out.println("stripped greeter-relay: calls linked inside the process: " + linking);
    assertThat(linking).isEqualTo("yes (ctx walk)");
    assertThat(inspection.producesSpans()).isTrue();
    assertThat(inspection.probes(BinaryInspection.Action.ATTACH)).containsAll(Probe.inProcessLinking());

    int perKind = 20;
    try (ProbeSession session = new ProbeSession(ProbeSession.STREAMS);
        ExampleApps.Server upstream = ExampleApps.startServer(dir)) {
      session.trace(dir.resolve("greeter-server")).trace(relayBin);
      RelayRun run = relayEveryKind(session, dir, upstream.address(), perKind, Probe.ProbeSet.STREAMS);
      long relayPid = run.relayPid();
      List<StreamParent> parents = run.parents();
      List<Stream> served = run.served();
      assertThat(served).as("calls the stripped relay served").hasSize(4 * perKind);
      Map<Stream, Integer> linkedTo = new HashMap<>();
      for (StreamParent p : parents) {
        if (p.pid() != relayPid) {
          continue;
        }
        assertThat(p.via()).as("no goid in a stripped binary: the ctx walk found it").isEqualTo(StreamParentVia.CONTEXT);
        Stream named = served.stream()
            .filter(s -> s.conn == p.parentConnectionId() && s.id == p.parentStreamId() && s.contains(p.monotonicNs()))
            .findFirst().orElse(null);
        assertThat(named).as("%s names a call the relay was serving at the time", p).isNotNull();
        linkedTo.merge(named, 1, Integer::sum);
      }
      long complete = served.stream().filter(s -> linkedTo.getOrDefault(s, 0) == 2).count();
      System.out.printf("stripped relay: %d served calls, %d with both upstream streams linked%n", served.size(), complete);
      assertThat(complete).isGreaterThanOrEqualTo((long) Math.ceil(0.99 * served.size()));
    }
  }
}
