package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.HeaderEvent;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.RepeatedTest;

/**
 * Many calls on several connections (stream ids reused across connections), the two processes'
 * event streams merged in a random interleaving (each process's own order kept, as one ring buffer
 * keeps it): every server span must still get its own client span as parent.
 */
class SpanAssemblerShuffleTest {
  static final long MS = 1_000_000L;

  @RepeatedTest(20)
  void everyServerSpanFindsItsOwnClient() {
    long seed = System.nanoTime();
    Random rnd = new Random(seed);
    TestClock time = new TestClock();
    List<FinishedSpan> out = new ArrayList<>();
    SpanAssembler a =
        new SpanAssembler(
            new SpanAssembler.Settings(Duration.ofSeconds(30), 10_000, Duration.ofSeconds(2), 10_000, RpcSemconv.Mode.STABLE, Set.of()),
            MonotonicClock.of(time), new FakeMetadata(), io.opentelemetry.api.metrics.MeterProvider.noop().get("test"), out::add, IdGenerator.random());

    Deque<HeaderEvent> client = new ArrayDeque<>();
    Deque<HeaderEvent> server = new ArrayDeque<>();
    long t = time.now;
    int calls = 0;
    for (int c = 0; c < 4; c++) {
      Events conn = new Events(41000 + c);
      for (int stream = 1; stream <= 2 * 25; stream += 2) {
        long t0 = t + rnd.nextInt(1000) * MS;
        boolean ok = rnd.nextBoolean();
        conn.path("/test.Calls/C" + c + "S" + stream); // the call's identity, on both sides
        client.add(conn.clientStart(stream, t0));
        server.add(conn.serverStart(stream, t0 + MS));
        if (ok) {
          server.add(conn.serverHeaders(stream, t0 + 2 * MS));
          server.add(conn.serverTrailers(stream, t0 + 3 * MS, 0, null));
          client.add(conn.clientHeaders(stream, t0 + 4 * MS));
          client.add(conn.clientTrailers(stream, t0 + 5 * MS, 0, null));
        } else {
          server.add(conn.serverTrailersOnly(stream, t0 + 3 * MS, 3, "bad"));
          client.add(conn.clientTrailersOnly(stream, t0 + 5 * MS, 3, "bad"));
        }
        calls++;
      }
    }
    while (!client.isEmpty() || !server.isEmpty()) {
      boolean takeClient = server.isEmpty() || (!client.isEmpty() && rnd.nextBoolean());
      a.accept(takeClient ? client.poll() : server.poll());
      time.advanceMillis(rnd.nextInt(3));
    }
    time.advanceMillis(5_000);
    a.expire();

    Map<String, SpanData> clients = new HashMap<>();
    List<SpanData> servers = new ArrayList<>();
    for (FinishedSpan f : out) {
      if (f.span().getKind() == SpanKind.CLIENT) {
        clients.put(f.span().getSpanId(), f.span());
      } else {
        servers.add(f.span());
      }
    }
    assertThat(clients).as("seed %d", seed).hasSize(calls);
    assertThat(servers).as("seed %d", seed).hasSize(calls);
    for (SpanData s : servers) {
      SpanData parent = clients.get(s.getParentSpanId());
      assertThat(parent).as("seed %d: parent of %s", seed, s).isNotNull();
      assertThat(parent.getTraceId()).isEqualTo(s.getTraceId());
      // The parent is this very call's client span, not another stream's or another connection's.
      assertThat(parent.getName()).as("seed %d", seed).isEqualTo(s.getName());
      assertThat(parent.getAttributes().get(AttributeKey.stringKey("rpc.response.status_code")))
          .isEqualTo(s.getAttributes().get(AttributeKey.stringKey("rpc.response.status_code")));
      assertThat(s.getStartEpochNanos()).isGreaterThanOrEqualTo(parent.getStartEpochNanos());
    }
    assertThat(servers.stream().map(SpanData::getParentSpanId).distinct()).hasSize(calls);
  }

  /**
   * Front client → relay → back server, many calls at once: the relay serves each front call and
   * makes two back calls from it (each with its StreamParent), plus background calls of its own (no
   * StreamParent). Each process's events keep their order (one ring buffer keeps it); the
   * StreamParents land anywhere near their client stream's start (before or after it, its end, its
   * parent's start or end). Every front call
   * must come out as one trace of six spans with exact parents, every background call as a root
   * with its back server span below it.
   */
  @RepeatedTest(20)
  void relayChainsAreOneTraceEach() {
    long seed = System.nanoTime();
    Random rnd = new Random(seed);
    TestClock time = new TestClock();
    List<FinishedSpan> out = new ArrayList<>();
    SpanAssembler a =
        new SpanAssembler(
            new SpanAssembler.Settings(Duration.ofSeconds(30), 10_000, Duration.ofSeconds(2), 10_000, RpcSemconv.Mode.STABLE, Set.of()),
            MonotonicClock.of(time), new FakeMetadata(), io.opentelemetry.api.metrics.MeterProvider.noop().get("test"), out::add, IdGenerator.random());
    int front = 100;
    int relay = 300;
    int back = 200;
    Events[] hop1 = {
      new Events(front, relay, 0xc000_a100L, 0xc000_b100L, 41000), new Events(front, relay, 0xc000_a101L, 0xc000_b101L, 41001)
    };
    Events[] hop2 = {
      new Events(relay, back, 0xc000_a200L, 0xc000_b200L, 42000), new Events(relay, back, 0xc000_a201L, 0xc000_b201L, 42001)
    };
    int[] next1 = {1, 1};
    int[] next2 = {1, 1};
    List<Deque<io.gospan.receiver.event.ProbeEvent>> queues = List.of(new ArrayDeque<>(), new ArrayDeque<>(), new ArrayDeque<>());
    Deque<io.gospan.receiver.event.ProbeEvent> fq = queues.get(0); // the front process
    Deque<io.gospan.receiver.event.ProbeEvent> rq = queues.get(1); // the relay
    Deque<io.gospan.receiver.event.ProbeEvent> bq = queues.get(2); // the back server
    Map<io.gospan.receiver.event.ProbeEvent, io.gospan.receiver.event.ProbeEvent> parents = new java.util.LinkedHashMap<>(); // client start -> its StreamParent
    int calls = 30;
    int background = 10;
    long t = time.now;
    for (int i = 0; i < calls + background; i++) {
      long t0 = t + rnd.nextInt(1000) * MS;
      if (i >= calls) {
        Events h = hop2[rnd.nextInt(2)];
        int st = next2[h == hop2[0] ? 0 : 1];
        next2[h == hop2[0] ? 0 : 1] += 2;
        h.path("/test.Back/BG" + i);
        rq.add(h.clientStart(st, t0));
        bq.add(h.serverStart(st, t0 + MS));
        bq.add(h.serverTrailersOnly(st, t0 + 2 * MS, 0, null));
        rq.add(h.clientTrailersOnly(st, t0 + 3 * MS, 0, null));
        continue;
      }
      int f = rnd.nextInt(2);
      Events h1 = hop1[f];
      int s1 = next1[f];
      next1[f] += 2;
      h1.path("/test.Front/C" + i);
      fq.add(h1.clientStart(s1, t0));
      rq.add(h1.serverStart(s1, t0 + MS));
      List<io.gospan.receiver.event.ProbeEvent> relayEnds = new ArrayList<>();
      for (String leg : List.of("x", "y")) {
        int b = rnd.nextInt(2);
        Events h2 = hop2[b];
        int s2 = next2[b];
        next2[b] += 2;
        h2.path("/test.Back/C" + i + leg);
        HeaderEvent start = h2.clientStart(s2, t0 + 2 * MS);
        parents.put(start, h2.streamParent(s2, t0 + 2 * MS, h1, s1));
        rq.add(start);
        bq.add(h2.serverStart(s2, t0 + 3 * MS));
        bq.add(h2.serverTrailersOnly(s2, t0 + 4 * MS, 0, null));
        relayEnds.add(h2.clientTrailersOnly(s2, t0 + 5 * MS, 0, null));
      }
      rq.addAll(relayEnds);
      rq.add(h1.serverTrailersOnly(s1, t0 + 6 * MS, 0, null));
      fq.add(h1.clientTrailersOnly(s1, t0 + 7 * MS, 0, null));
    }
    // Merge: the next event comes from a queue chosen in proportion to what it has left. Then each
    // StreamParent goes anywhere within 12 events of its client stream's start, before or after.
    List<io.gospan.receiver.event.ProbeEvent> merged = new ArrayList<>();
    int left = queues.stream().mapToInt(Deque::size).sum();
    while (left > 0) {
      int pick = rnd.nextInt(left);
      for (Deque<io.gospan.receiver.event.ProbeEvent> q : queues) {
        if (pick < q.size()) {
          merged.add(q.poll());
          break;
        }
        pick -= q.size();
      }
      left--;
    }
    for (Map.Entry<io.gospan.receiver.event.ProbeEvent, io.gospan.receiver.event.ProbeEvent> e : parents.entrySet()) {
      int at = merged.indexOf(e.getKey()) + rnd.nextInt(25) - 12;
      merged.add(Math.max(0, Math.min(merged.size(), at)), e.getValue());
    }
    for (io.gospan.receiver.event.ProbeEvent e : merged) {
      a.accept(e);
      time.advanceMillis(rnd.nextInt(3));
    }
    time.advanceMillis(5_000);
    a.expire();

    Map<String, FinishedSpan> byLabel = new HashMap<>();
    for (FinishedSpan f : out) {
      String label = f.side() + " " + f.pid() + " " + f.span().getName();
      assertThat(byLabel.put(label, f)).as("seed %d: %s twice", seed, label).isNull();
    }
    assertThat(out).as("seed %d", seed).hasSize(6 * calls + 2 * background);
    for (int i = 0; i < calls; i++) {
      SpanData c1 = byLabel.get("CLIENT 100 test.Front/C" + i).span();
      SpanData s1 = byLabel.get("SERVER 300 test.Front/C" + i).span();
      assertThat(c1.getParentSpanContext().isValid()).as("seed %d", seed).isFalse();
      assertThat(s1.getParentSpanId()).as("seed %d", seed).isEqualTo(c1.getSpanId());
      assertThat(s1.getTraceId()).as("seed %d", seed).isEqualTo(c1.getTraceId());
      for (String leg : List.of("x", "y")) {
        SpanData c2 = byLabel.get("CLIENT 300 test.Back/C" + i + leg).span();
        SpanData s2 = byLabel.get("SERVER 200 test.Back/C" + i + leg).span();
        assertThat(c2.getParentSpanId()).as("seed %d: C%d%s", seed, i, leg).isEqualTo(s1.getSpanId());
        assertThat(s2.getParentSpanId()).as("seed %d", seed).isEqualTo(c2.getSpanId());
        assertThat(c2.getTraceId()).as("seed %d", seed).isEqualTo(c1.getTraceId());
        assertThat(s2.getTraceId()).as("seed %d", seed).isEqualTo(c1.getTraceId());
      }
    }
    for (int i = calls; i < calls + background; i++) {
      SpanData c2 = byLabel.get("CLIENT 300 test.Back/BG" + i).span();
      SpanData s2 = byLabel.get("SERVER 200 test.Back/BG" + i).span();
      assertThat(c2.getParentSpanContext().isValid()).as("seed %d", seed).isFalse();
      assertThat(s2.getParentSpanId()).as("seed %d", seed).isEqualTo(c2.getSpanId());
      assertThat(s2.getTraceId()).as("seed %d", seed).isEqualTo(c2.getTraceId());
    }
    assertThat(out.stream().map(f -> f.span().getTraceId()).distinct()).as("seed %d", seed).hasSize(calls + background);
    assertThat(a.heldServerSpans() + a.heldClientSpans()).isZero();
  }
}
