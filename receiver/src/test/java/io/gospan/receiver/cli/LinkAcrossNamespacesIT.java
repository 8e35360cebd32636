package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.gospan.receiver.export.OtlpGrpcReceiver;
import io.gospan.receiver.export.OtlpGrpcReceiver.Arrived;
import io.gospan.receiver.link.proto.Answer;
import io.gospan.receiver.link.proto.LinkGrpc;
import io.gospan.receiver.link.proto.LookupRequest;
import io.gospan.receiver.link.proto.LookupResponse;
import io.gospan.receiver.testing.ExampleApps;
import io.gospan.receiver.testing.LinkNetwork;
import io.gospan.receiver.testing.NamespaceBridge;
import io.gospan.receiver.testing.SidecarProcess;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Span.SpanKind;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Linking across gospans, end to end: three network namespaces made by the test ({@link
 * LinkNetwork}: 10.77.0.1, .2, .3 on one bridge, like three pods), each with one tier of
 * greeter-client → greeter-relay → greeter-server and its own {@code gospan run} (the jar, inside
 * the namespace with {@code ip netns exec}, its selector naming only its tier's binary), all
 * exporting OTLP/gRPC to one collector (this JVM's receiver, reached through {@link
 * NamespaceBridge}). Each client call must be one trace of six spans with exact parent ids across
 * the three gospans, for at least 99 % of the calls: directly, and with the server behind a DNAT
 * rule (nftables in the server's namespace, as kube-proxy does for a ClusterIP). Then the client's
 * gospan is stopped and replaced by nothing, by a peer that answers too late and by one that
 * answers malformed ids: the relay's server spans are roots after their bounded wait, counted, and
 * the rest of each chain is intact.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LinkAcrossNamespacesIT {
  static final String VIP = "10.77.1.10";
  static final int LINK_PORT = 9465;
  /** streams.link_wait 2 s + the extra wait 500 ms + batch schedule_delay 200 ms + slack for a busy machine. */
  static final long BOUND_MILLIS = 2_000 + 500 + 200 + 1_500;

  static LinkNetwork net;
  static OtlpGrpcReceiver receiver;
  static NamespaceBridge collector;
  static Path dir;
  static Gospan clientGospan;
  static Gospan relayGospan;
  static Gospan serverGospan;
  static final List<AutoCloseable> closing = new ArrayList<>();

  /** One {@code gospan run} in a namespace. */
  record Gospan(String tier, SidecarProcess sidecar) {
    static Gospan start(String ns, String tier, Path binary) throws Exception {
      return start(ns, tier, binary, "");
    }

    /** As {@link #start(String, String, Path)}, with {@code extraYaml} (more top-level sections) in its configuration. */
    static Gospan start(String ns, String tier, Path binary, String extraYaml) throws Exception {
      Path config = Files.createTempFile("gospan-link-" + tier, ".yaml");
      Files.writeString(config, "discovery:\n  instrument:\n    - exe_path: \"" + binary + "\"\n"
          + "exporter:\n  type: otlp\n  otlp:\n    endpoint: http://" + LinkNetwork.BRIDGE_IP + ":4317\n"
          + "  batch:\n    schedule_delay: 200ms\nheaders:\n  allow: [relay-call]\n"
          + "metrics:\n  enabled: true\n  export_interval: 1s\ntelemetry:\n  http:\n    enabled: false\n"
          + "link:\n  listen: 0.0.0.0:" + LINK_PORT + "\n" + extraYaml);
      SidecarProcess p = SidecarProcess.start(tier + " gospan", LinkNetwork.in(ns), List.of("-Xmx128m"), config);
      assertThat(p.logged("link service on 0.0.0.0:" + LINK_PORT)).as("%s gospan serves links:\n%s", tier, p.logText()).isTrue();
      return new Gospan(tier, p);
    }

    boolean traces(long pid) {
      return sidecar.traces(pid);
    }

    /** Waits at most 30 s for {@code ok}; an AssertionError naming {@code what} with this gospan's log after that. */
    void await(BooleanSupplier ok, String what) throws InterruptedException {
      sidecar.await(ok, what);
    }

    boolean alive() {
      return sidecar.process().isAlive();
    }

    /** SIGTERM: flush, detach, exit 0. */
    void stop() throws Exception {
      sidecar.stop(Duration.ofSeconds(30));
    }

    long pid() {
      return sidecar.pid();
    }
  }

  @BeforeAll
  static void setUp() throws Exception {
    dir = ExampleApps.build();
    net = LinkNetwork.create();
    receiver = OtlpGrpcReceiver.start(0);
    InetSocketAddress collectorAddress = new InetSocketAddress("127.0.0.1", Integer.parseInt(
        receiver.endpoint().substring(receiver.endpoint().lastIndexOf(':') + 1)));
    collector = NamespaceBridge.start(net.bridge, new InetSocketAddress(LinkNetwork.BRIDGE_IP, 4317), () -> collectorAddress);
    clientGospan = Gospan.start(net.client, "client", dir.resolve("greeter-client"));
    relayGospan = Gospan.start(net.relay, "relay", dir.resolve("greeter-relay"));
    serverGospan = Gospan.start(net.server, "server", dir.resolve("greeter-server"));
  }

  @AfterAll
  static void tearDown() throws Exception {
    try {
      for (Gospan g : new Gospan[] {relayGospan, serverGospan, clientGospan}) {
        if (g != null && g.alive()) {
          g.stop();
        }
      }
    } finally {
      Collections.reverse(closing);
      for (AutoCloseable c : closing) {
        c.close();
      }
      if (collector != null) {
        collector.close();
      }
      if (receiver != null) {
        receiver.close();
      }
      if (net != null) {
        net.close();
      }
    }
  }

  @Test
  @Order(1)
  void eachCallIsOneTraceAcrossThreeGospans() throws Exception {
    RelayPropagationIT.Spans s = run("ns-direct", LinkNetwork.SERVER_IP + ":50051",
        spans -> RelayPropagationIT.complete(spans).size() >= RelayPropagationIT.minimum(spans.served().size())
            && RelayPropagationIT.backgroundSettled(spans));
    checkChains(s, "ns-direct");
  }

  @Test
  @Order(2)
  void throughADnatAsAClusterIpToo() throws Exception {
    net.dnat(net.server, VIP, 80, LinkNetwork.SERVER_IP, 50051, net.relay, LinkNetwork.SERVER_IP);
    RelayPropagationIT.Spans s = run("ns-dnat", VIP + ":80",
        spans -> RelayPropagationIT.complete(spans).size() >= RelayPropagationIT.minimum(spans.served().size())
            && RelayPropagationIT.backgroundSettled(spans));
    checkChains(s, "ns-dnat");
    // the DNAT did happen: the relay called the service address, the server saw its own
    Span relayClient = s.ofPid(s.relay, SpanKind.SPAN_KIND_CLIENT).get(0);
    assertThat(attr(relayClient, "network.peer.address")).isEqualTo(VIP);
    assertThat(attr(relayClient, "network.peer.port")).isEqualTo("80");
    Span server = s.ofPid(s.server, SpanKind.SPAN_KIND_SERVER).get(0);
    assertThat(attr(server, "network.peer.address")).isEqualTo(LinkNetwork.RELAY_IP);
  }

  /**
   * A source NAT between relay and server (the relay's connections leave as 10.77.0.12): the
   * server sees another client address, whose gospan (the relay's, listening on every address of
   * its namespace) traced no client span from it and says so: the server spans are roots, and
   * only they (the client → relay link is untouched).
   */
  @Test
  @Order(3)
  void aSourceNatIsNotLinkedAndTheAnswerSaysSo() throws Exception {
    String natted = "10.77.0.12";
    net.snat(net.relay, natted, LinkNetwork.SERVER_IP, 50051);
    try {
      long notFound = counter(relayGospan, "gospan.link.queries.served", Map.of("result", "not_found"));
      RelayPropagationIT.Spans s = run("ns-snat", LinkNetwork.SERVER_IP + ":50051", LinkAcrossNamespacesIT::relayedSettledUnlinked);
      List<Span> served = s.served();
      assertThat(served.size()).as("ns-snat: calls served; %s", s.describe()).isGreaterThanOrEqualTo(RelayPropagationIT.MIN_SERVED);
      assertThat(RelayPropagationIT.servedWithClient(s)).as("ns-snat: relay server spans still linked to the client span")
          .isGreaterThanOrEqualTo(RelayPropagationIT.minimum(served.size()));
      List<Span> servers = s.ofPid(s.server, SpanKind.SPAN_KIND_SERVER).stream().filter(s::inWindow).toList();
      assertThat(servers).as("ns-snat: the server saw the NAT's address").allSatisfy(sp ->
          assertThat(attr(sp, "client.address")).isEqualTo(natted));
      assertThat(servers).as("ns-snat: server spans behind a source NAT are roots").allSatisfy(sp ->
          assertThat(sp.getParentSpanId()).isEmpty());
      awaitCounter(relayGospan, "gospan.link.queries.served", Map.of("result", "not_found"), notFound + servers.size() / 2);
    } finally {
      net.noSnat(net.relay, natted);
    }
  }

  static boolean relayedSettledUnlinked(RelayPropagationIT.Spans s) {
    return s.ofPid(s.server, SpanKind.SPAN_KIND_SERVER).stream().filter(s::inWindow).count() >= 2L * s.served().size() - 8
        && RelayPropagationIT.servedWithClient(s) >= RelayPropagationIT.minimum(s.served().size());
  }

  /**
   * Last: each failure to reach the absent peer doubles the relay's back-off for its address (1 s
   * to 60 s, reset by an answer), so a fake peer started after this test would not be asked
   * within its window (seen: the malformed-answer case got no question, 8 s of back-off).
   */
  @Test
  @Order(6)
  void thePeerGospanAbsentMakesRootsAfterTheBoundedWaitCounted() throws Exception {
    stopClientGospan();
    for (AutoCloseable c : closing) { // the fake peers
      c.close();
    }
    closing.clear();
    long unreachableBefore = counter(relayGospan, "gospan.link.peers.unreachable", null);
    RelayPropagationIT.Spans s = run("ns-absent", LinkNetwork.SERVER_IP + ":50051", LinkAcrossNamespacesIT::relayedSettled);
    checkRootsBelowAnUntracedClient(s, "ns-absent");
    awaitCounter(relayGospan, "gospan.link.peers.unreachable", null, unreachableBefore + 1);
  }

  @Test
  @Order(4)
  void aPeerThatAnswersSlowlyIsWaitedForBoundedCounted() throws Exception {
    stopClientGospan(); // the fake takes its place at the client's address
    fakePeer(req -> answerAll(req, true), 5_000);
    long before = counter(relayGospan, "gospan.link.lookups.unanswered", Map.of("reason", "timeout"));
    RelayPropagationIT.Spans s = run("ns-slow", LinkNetwork.SERVER_IP + ":50051", LinkAcrossNamespacesIT::relayedSettled);
    checkRootsBelowAnUntracedClient(s, "ns-slow");
    awaitCounter(relayGospan, "gospan.link.lookups.unanswered", Map.of("reason", "timeout"), before + s.served().size() / 2);
  }

  @Test
  @Order(5)
  void malformedAnswersAreIgnoredCounted() throws Exception {
    stopClientGospan();
    fakePeer(req -> answerAll(req, false), 0);
    long before = counter(relayGospan, "gospan.link.answers.malformed", Map.of("reason", "bad_ids"));
    long linkedBefore = counter(relayGospan, "gospan.link.spans.linked", null);
    RelayPropagationIT.Spans s = run("ns-malformed", LinkNetwork.SERVER_IP + ":50051", LinkAcrossNamespacesIT::relayedSettled);
    checkRootsBelowAnUntracedClient(s, "ns-malformed");
    awaitCounter(relayGospan, "gospan.link.answers.malformed", Map.of("reason", "bad_ids"), before + s.served().size() / 2);
    assertThat(counter(relayGospan, "gospan.link.spans.linked", null)).as("nothing linked by a malformed answer")
        .isEqualTo(linkedBefore);
  }

  /**
   * Sampling across three gospans, each {@code sampling: traceidratio 0.25} (started again so;
   * last, as the client's gospan is gone by now), the client at 500 calls/s for 14 s: only whole
   * traces are exported, across the gospans, a quarter of the calls ({@link RelayPropagationIT#checkSampled}).
   */
  @Test
  @Order(7)
  void ratioQuarterKeepsAQuarterOfTheCallsAsWholeTracesAcrossThreeGospans() throws Exception {
    for (Gospan g : new Gospan[] {relayGospan, serverGospan, clientGospan}) {
      if (g.alive()) {
        g.stop();
      }
    }
    String sampling = "sampling:\n  sampler: traceidratio\n  ratio: 0.25\n";
    clientGospan = Gospan.start(net.client, "client", dir.resolve("greeter-client"), sampling);
    relayGospan = Gospan.start(net.relay, "relay", dir.resolve("greeter-relay"), sampling);
    serverGospan = Gospan.start(net.server, "server", dir.resolve("greeter-server"), sampling);
    RelayPropagationIT.Spans s = run("ns-sampled", LinkNetwork.SERVER_IP + ":50051", RelayPropagationIT.SAMPLED_RATE,
        RelayPropagationIT.SAMPLED_WINDOW_MS, spans -> true);
    RelayPropagationIT.checkSampled(receiver, s, 0.25, "ns-sampled");
  }

  /** Stops the client's gospan, once (the failure cases put a fake peer, or none, at its address). */
  static void stopClientGospan() throws Exception {
    if (clientGospan.alive()) {
      clientGospan.stop();
    }
  }

  // ------------------------------------------------------------------------------------ checks

  /**
   * The six-span chain for >= 99 % of the calls served, and >= 99 % of all the calls in the window
   * (served and background) linked across gospans: each background call's server span a child of
   * the relay's client span, itself a root (the 99 % is over the window's calls pooled: with ~40
   * background calls, 99 % of them alone would be all of them, a stricter bar than the served
   * calls'); latency printed; counters agree.
   */
  static void checkChains(RelayPropagationIT.Spans s, String tag) throws Exception {
    List<Span> served = RelayPropagationIT.checkServed(s, tag);
    int complete = RelayPropagationIT.complete(s).size();
    assertThat(complete)
        .as("%s: calls served that are one trace client -> relay server -> 2 relay clients -> 2 servers, across three gospans, of %d; %s",
            tag, served.size(), s.describe())
        .isGreaterThanOrEqualTo(RelayPropagationIT.minimum(served.size()));
    try {
      int background = RelayPropagationIT.background(s).size();
      long linked = RelayPropagationIT.checkBackgroundParents(s, tag);
      assertThat(complete + linked)
          .as("%s: calls served that are whole chains (%d of %d) + background server spans whose parent is the relay's client span (%d of %d)",
              tag, complete, served.size(), linked, background)
          .isGreaterThanOrEqualTo(RelayPropagationIT.minimum(served.size() + background));
    } catch (AssertionError e) {
      StringBuilder b = new StringBuilder(e.getMessage()).append("\nbackground server spans without their relay client span:\n");
      for (Span sv : RelayPropagationIT.background(s)) {
        if (s.byId(sv.getParentSpanId()) == null) {
          b.append("  ").append(hex(sv.getSpanId())).append(sv.getParentSpanId().isEmpty() ? " a root" : " parent "
              + hex(sv.getParentSpanId()) + " not received").append('\n');
        }
      }
      throw new AssertionError(b.append(counters()).toString(), e);
    }
    printLatency(s, tag);
    awaitCounter(relayGospan, "gospan.link.spans.linked", null, 1);
    awaitCounter(serverGospan, "gospan.link.spans.linked", null, 1);
  }

  /**
   * No gospan traced the client: each relay server span in the window is a root, exported within
   * the bounded wait of its end, with its two relay client spans and their server spans below it
   * in its trace (linking between the relay's and the server's gospans still works).
   */
  static void checkRootsBelowAnUntracedClient(RelayPropagationIT.Spans s, String tag) {
    List<Span> served = s.served();
    assertThat(served.size()).as("%s: calls the relay served in the window; %s", tag, s.describe())
        .isGreaterThanOrEqualTo(RelayPropagationIT.MIN_SERVED);
    assertThat(served).as("%s: relay server spans are roots", tag).allSatisfy(rs -> assertThat(rs.getParentSpanId()).isEmpty());
    long chains = chainsBelow(s);
    if (chains < RelayPropagationIT.minimum(served.size())) {
      throw new AssertionError(tag + ": relay server spans with their two relay clients and their two server spans below: "
          + chains + " of " + served.size() + ", expected at least " + RelayPropagationIT.minimum(served.size()) + "; "
          + s.describe() + "\n" + brokenChains(s));
    }
    Map<ByteString, Long> arrived = arrivals();
    List<Long> waits = new ArrayList<>();
    for (Span rs : served) {
      Long at = arrived.get(rs.getSpanId());
      waits.add((at - rs.getEndTimeUnixNano()) / 1_000_000);
    }
    Collections.sort(waits);
    System.out.printf("%s: %d relay server spans, roots; end -> export ms p50 %d, max %d%n", tag, served.size(),
        waits.get(waits.size() / 2), waits.get(waits.size() - 1));
    assertThat(waits.get(waits.size() - 1)).as("%s: ms from a relay server span's end to its export (bounded wait)", tag)
        .isLessThanOrEqualTo(BOUND_MILLIS);
  }

  /** Relay server spans in the window with their two relay client spans and, below each, its server span. */
  static long chainsBelow(RelayPropagationIT.Spans s) {
    return s.served().stream().filter(rs -> {
      List<Span> rcs = s.children(rs, s.relay, SpanKind.SPAN_KIND_CLIENT);
      return rcs.size() == 2 && rcs.stream().allMatch(rc -> s.children(rc, s.server, SpanKind.SPAN_KIND_SERVER).size() == 1);
    }).count();
  }

  /** What is missing below the relay server spans whose chain is not whole, and the gospans' counters that say why. */
  static String brokenChains(RelayPropagationIT.Spans s) {
    StringBuilder b = new StringBuilder();
    int shown = 0;
    for (Span rs : s.served()) {
      List<Span> rcs = s.children(rs, s.relay, SpanKind.SPAN_KIND_CLIENT);
      if (rcs.size() == 2 && rcs.stream().allMatch(rc -> s.children(rc, s.server, SpanKind.SPAN_KIND_SERVER).size() == 1)) {
        continue;
      }
      if (shown++ == 5) {
        break;
      }
      b.append("  relay server ").append(hex(rs.getSpanId())).append(" trace ").append(hex(rs.getTraceId()))
          .append(": relay clients below ").append(rcs.size());
      for (Span rc : rcs) {
        b.append(", ").append(hex(rc.getSpanId())).append(" with server spans below ")
            .append(s.children(rc, s.server, SpanKind.SPAN_KIND_SERVER).size());
      }
      b.append('\n');
    }
    return b.append(counters()).toString();
  }

  /** The relay's and the server's gospan counters that say why a link is missing. */
  static String counters() {
    StringBuilder b = new StringBuilder();
    for (Gospan g : new Gospan[] {relayGospan, serverGospan}) {
      b.append("  ").append(g.tier()).append(" gospan: dropped ").append(counter(g, "gospan.spans.dropped", null))
          .append(", traces shed ").append(counter(g, "gospan.traces.shed", null))
          .append(", in-process links ").append(counters(g, "gospan.links.in_process", "result"))
          .append(", lookups sent ").append(counter(g, "gospan.link.lookups.sent", null))
          .append(", answered ").append(counter(g, "gospan.link.lookups.answered", null))
          .append(", unanswered ").append(counters(g, "gospan.link.lookups.unanswered", "reason"))
          .append(", linked ").append(counter(g, "gospan.link.spans.linked", null))
          .append(", late ").append(counter(g, "gospan.link.answers.late", null))
          .append(", queries served ").append(counters(g, "gospan.link.queries.served", "result")).append('\n');
    }
    return b.toString();
  }

  static String hex(ByteString id) {
    StringBuilder b = new StringBuilder();
    for (byte x : id.toByteArray()) {
      b.append(String.format("%02x", x));
    }
    return b.toString();
  }

  /** Counter {@code name} of {@code g} by the values of attribute {@code key}. */
  static Map<String, Long> counters(Gospan g, String name, String key) {
    Map<String, Long> out = new java.util.TreeMap<>();
    for (OtlpGrpcReceiver.ReceivedMetric m : receiver.metrics()) {
      if (!m.metric().getName().equals(name) || !fromPid(m.resource().getAttributesList(), g.pid())) {
        continue;
      }
      for (NumberDataPoint p : m.metric().getSum().getDataPointsList()) {
        out.merge(String.valueOf(pointAttr(p, key)), p.getAsInt(), Math::max);
      }
    }
    return out;
  }

  static boolean relayedSettled(RelayPropagationIT.Spans s) {
    List<Span> served = s.served();
    return !served.isEmpty() && chainsBelow(s) >= RelayPropagationIT.minimum(served.size())
        && RelayPropagationIT.backgroundSettled(s);
  }

  /** Link latency: from the end of each server span (relay's and server's) in the window to its arrival at the collector. */
  static void printLatency(RelayPropagationIT.Spans s, String tag) {
    Map<ByteString, Long> arrived = arrivals();
    for (long pid : new long[] {s.relay, s.server}) {
      List<Long> ms = new ArrayList<>();
      for (Span sp : s.ofPid(pid, SpanKind.SPAN_KIND_SERVER)) {
        if (s.inWindow(sp) && !sp.getParentSpanId().isEmpty() && !RelayPropagationIT.isBackground(sp)) {
          ms.add((arrived.get(sp.getSpanId()) - sp.getEndTimeUnixNano()) / 1_000_000);
        }
      }
      Collections.sort(ms);
      if (!ms.isEmpty()) {
        System.out.printf("%s: %s server spans of relayed calls linked across gospans: %d; end -> export ms p50 %d p99 %d"
                + " (batch schedule_delay 200 ms)%n",
            tag, pid == s.relay ? "relay" : "server", ms.size(), ms.get(ms.size() / 2), ms.get((int) Math.floor(0.99 * (ms.size() - 1))));
      }
    }
  }

  static Map<ByteString, Long> arrivals() {
    Map<ByteString, Long> m = new HashMap<>();
    for (Arrived a : receiver.spansArrived()) {
      m.putIfAbsent(a.span().span().getSpanId(), a.arrivedEpochNanos());
    }
    return m;
  }

  static String attr(Span s, String key) {
    for (KeyValue kv : s.getAttributesList()) {
      if (kv.getKey().equals(key)) {
        return kv.getValue().hasStringValue() ? kv.getValue().getStringValue() : String.valueOf(kv.getValue().getIntValue());
      }
    }
    return null;
  }

  // ------------------------------------------------------------------------------------ counters

  /** The latest value of gospan's counter {@code name} (over points with {@code attrs}, or all) as {@code g} exported it. */
  static long counter(Gospan g, String name, Map<String, String> attrs) {
    Map<String, Long> latest = new HashMap<>(); // cumulative: the largest value seen per attribute set
    for (OtlpGrpcReceiver.ReceivedMetric m : receiver.metrics()) {
      if (!m.metric().getName().equals(name) || !fromPid(m.resource().getAttributesList(), g.pid())) {
        continue;
      }
      for (NumberDataPoint p : m.metric().getSum().getDataPointsList()) {
        if (attrs != null && !attrs.entrySet().stream().allMatch(e -> e.getValue().equals(pointAttr(p, e.getKey())))) {
          continue;
        }
        latest.merge(p.getAttributesList().toString(), p.getAsInt(), Math::max);
      }
    }
    return latest.values().stream().mapToLong(Long::longValue).sum();
  }

  static void awaitCounter(Gospan g, String name, Map<String, String> attrs, long atLeast) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (counter(g, name, attrs) < atLeast) {
      if (System.nanoTime() > deadline) {
        List<String> log = g.sidecar().log();
        List<String> tail = log.subList(Math.max(0, log.size() - 40), log.size());
        throw new AssertionError(g.tier() + " gospan: " + name + " " + attrs + " = " + counter(g, name, attrs)
            + ", expected at least " + atLeast + "; its link counters: sent " + counter(g, "gospan.link.lookups.sent", null)
            + ", answered " + counter(g, "gospan.link.lookups.answered", null)
            + ", unanswered " + counter(g, "gospan.link.lookups.unanswered", null)
            + ", skipped " + counter(g, "gospan.link.lookups.skipped", null)
            + ", unreachable " + counter(g, "gospan.link.peers.unreachable", null)
            + ", malformed " + counter(g, "gospan.link.answers.malformed", null)
            + "; its log's end:\n" + String.join("\n", tail));
      }
      Thread.sleep(200);
    }
  }

  static boolean fromPid(List<KeyValue> resource, long pid) {
    return resource.stream().anyMatch(kv -> kv.getKey().equals("process.pid") && kv.getValue().getIntValue() == pid);
  }

  static String pointAttr(NumberDataPoint p, String key) {
    return p.getAttributesList().stream().filter(kv -> kv.getKey().equals(key)).map(kv -> kv.getValue().getStringValue())
        .findFirst().orElse(null);
  }

  // ------------------------------------------------------------------------------------ fake peers

  static final ByteString TRACE = ByteString.copyFrom(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  static final ByteString SPAN = ByteString.copyFrom(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});

  /** Answers every query found: with well-formed ids ({@code wellFormed}), else with a 5-byte trace id. */
  static LookupResponse answerAll(LookupRequest req, boolean wellFormed) {
    LookupResponse.Builder b = LookupResponse.newBuilder();
    req.getQueriesList().forEach(q -> b.addAnswers(Answer.newBuilder().setFlow(q.getFlow())
        .setServerStartUnixNano(q.getServerStartUnixNano()).setFound(true)
        .setTraceId(wellFormed ? TRACE : ByteString.copyFrom(new byte[5])).setSpanId(SPAN)));
    return b.build();
  }

  /**
   * A link service at the client's address (10.77.0.1:9465, bridged into its namespace) that
   * answers each request with {@code behaviour} after {@code delayMillis}.
   */
  static void fakePeer(Function<LookupRequest, LookupResponse> behaviour, long delayMillis) throws Exception {
    Server fake = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(new LinkGrpc.LinkImplBase() {
      @Override
      public StreamObserver<LookupRequest> lookup(StreamObserver<LookupResponse> out) {
        return new StreamObserver<>() {
          @Override
          public void onNext(LookupRequest req) {
            LookupResponse r = behaviour.apply(req);
            Thread t = new Thread(() -> {
              try {
                Thread.sleep(delayMillis);
                synchronized (out) {
                  out.onNext(r);
                }
              } catch (Exception ignored) {
                // the stream is gone
              }
            });
            t.setDaemon(true);
            t.start();
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        };
      }
    }).build().start();
    // one fake at a time: the previous test's stops listening on 10.77.0.1:9465 first
    for (AutoCloseable c : closing) {
      c.close();
    }
    closing.clear();
    closing.add(fake::shutdownNow);
    InetSocketAddress at = new InetSocketAddress("127.0.0.1", fake.getPort());
    closing.add(NamespaceBridge.start(net.client, new InetSocketAddress(LinkNetwork.CLIENT_IP, LINK_PORT), () -> at));
  }

  // ------------------------------------------------------------------------------------ the run

  /**
   * Starts the server (ns S, 10.77.0.3:50051), the relay (ns R, 10.77.0.2:50052, calling {@code
   * upstream}, background calls every 100 ms) and the client (ns C, 50 calls/s of every kind);
   * once each gospan traces its tier, measures a window of {@link RelayPropagationIT#WINDOW_MS},
   * then waits (at most 30 s) until {@code done} holds on what arrived.
   */
  static RelayPropagationIT.Spans run(String tag, String upstream, Predicate<RelayPropagationIT.Spans> done) throws Exception {
    return run(tag, upstream, 50, RelayPropagationIT.WINDOW_MS, done);
  }

  /** As {@link #run(String, String, Predicate)}, the client at {@code rate} calls/s, a window of {@code windowMs}. */
  static RelayPropagationIT.Spans run(String tag, String upstream, int rate, long windowMs,
      Predicate<RelayPropagationIT.Spans> done) throws Exception {
    try (ExampleApps.Server server = ExampleApps.startListening(LinkNetwork.in(net.server), dir.resolve("greeter-server"),
            LinkNetwork.SERVER_IP + ":50051", Map.of("OTEL_SERVICE_NAME", tag + "-server"));
        ExampleApps.Server relay = ExampleApps.startListening(LinkNetwork.in(net.relay), dir.resolve("greeter-relay"),
            LinkNetwork.RELAY_IP + ":50052", Map.of("OTEL_SERVICE_NAME", tag + "-relay"), "-upstream", upstream,
            "-background", "100ms")) {
      serverGospan.await(() -> serverGospan.traces(server.pid()), tag + ": server traced by its gospan");
      relayGospan.await(() -> relayGospan.traces(relay.pid()), tag + ": relay traced by its gospan");
      List<String> cmd = LinkNetwork.in(net.client, dir.resolve("greeter-client").toString(), "-addr",
          LinkNetwork.RELAY_IP + ":50052", "-quiet", "-n", "0", "-rate", String.valueOf(rate), "-rpc", "all");
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .redirectError(ProcessBuilder.Redirect.INHERIT);
      pb.environment().put("OTEL_SERVICE_NAME", tag + "-client");
      Process client = pb.start();
      long t0;
      long t1;
      try {
        boolean clientTraced = clientGospan.alive();
        clientGospan.await(() -> !clientTraced || clientGospan.traces(client.pid()), tag + ": the client traced");
        Thread.sleep(1000);
        t0 = RelayPropagationIT.epochNanos();
        Thread.sleep(windowMs);
        t1 = RelayPropagationIT.epochNanos();
        Thread.sleep(500);
        assertThat(client.isAlive()).as(tag + ": the client still runs (every call as expected)").isTrue();
      } finally {
        client.destroy();
        client.waitFor(10, TimeUnit.SECONDS);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      RelayPropagationIT.Spans s;
      do {
        Thread.sleep(500);
        s = new RelayPropagationIT.Spans(receiver.spans(), client.pid(), relay.pid(), server.pid(), t0, t1);
      } while (!done.test(s) && System.nanoTime() < deadline);
      System.out.println(tag + ": " + s.describe());
      return s;
    }
  }
}
