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
}
