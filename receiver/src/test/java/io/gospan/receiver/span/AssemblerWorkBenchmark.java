package io.gospan.receiver.span;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.SocketPair;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.trace.IdGenerator;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Span assembly alone, in one thread, as the ring buffer thread runs it under the load benchmark's
 * {@code unary, 10,000} workload (20,000 spans/s): unary calls of the greeter client to the
 * greeter server over 4 connections, 16 in flight, the streams probe set's four events per call
 * (the client's NewStream return and closeStream, the server's operateHeaders and writeStatus),
 * {@code streams.*} at their defaults, an event time 100 µs of simulated time per call apart and
 * {@link SpanAssembler#expire} every 100 ms of it. The events are made before the clock starts
 * (decode is not measured), the processes' resources are {@link ProcFsProcessMetadata}'s and the sink only
 * counts (RED metrics and admission are not measured).
 *
 * <p>Prints per round: ns of this thread's CPU per span and bytes it allocated per span. Not part
 * of CI; run it under the benchmark lock ({@code flock -o /tmp/gospan-it.lock}).
 *
 * <p>Usage: {@code java -cp <test class path> io.gospan.receiver.span.AssemblerWorkBenchmark [rounds] [calls per round]}
 */
public final class AssemblerWorkBenchmark {
  private AssemblerWorkBenchmark() {}

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 400_000;
    TestClock time = new TestClock();
    long[] spans = {0};
    long[] sink = {0};
    SpanAssembler a = new SpanAssembler(
        new SpanAssembler.Settings(Duration.ofMinutes(2), 65_536, Duration.ofSeconds(2), 16_384, RpcSemconv.Mode.STABLE,
            Set.of()),
        MonotonicClock.of(time), ProcFsProcessMetadata.create(java.util.Map.of()), SdkMeterProvider.builder().build().get("bench"),
        f -> {
          spans[0]++;
          sink[0] += f.span() instanceof TraceIdBits b ? b.traceIdLow() : 0;
        },
        IdGenerator.random());
    Events[] conns = new Events[4];
    for (int c = 0; c < conns.length; c++) {
      conns[c] = new Events(40_000 + c);
    }
    int[] nextStream = {1, 1, 1, 1};
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    for (int r = 0; r < rounds; r++) {
      // the round's events, 16 calls at a time
      List<HeaderEvent> events = new ArrayList<>(calls * 4);
      long t = time.now;
      for (int done = 0; done < calls; done += 16) {
        int[] ids = new int[16];
        for (int i = 0; i < 16; i++) {
          ids[i] = nextStream[i % 4];
          nextStream[i % 4] += 2;
        }
        for (int i = 0; i < 16; i++) {
          events.add(conns[i % 4].clientNewStream(ids[i], t + i * 100_000L));
        }
        for (int i = 0; i < 16; i++) {
          events.add(conns[i % 4].serverStart(ids[i], t + i * 100_000L + 20_000));
        }
        for (int i = 0; i < 16; i++) {
          events.add(conns[i % 4].serverWriteStatus(ids[i], t + i * 100_000L + 60_000, 0, null));
        }
        for (int i = 0; i < 16; i++) {
          events.add(conns[i % 4].clientCloseStream(ids[i], t + i * 100_000L + 80_000, 0, null));
        }
        t += 16 * 100_000L;
      }
      long spans0 = spans[0];
      long cpu0 = threads.getCurrentThreadCpuTime();
      long alloc0 = threads.getThreadAllocatedBytes(tid);
      long nextExpire = time.now + 100_000_000L;
      for (int i = 0, n = events.size(); i < n; i++) {
        HeaderEvent e = events.get(i);
        time.now = e.monotonicNs();
        a.accept(e);
        if (time.now >= nextExpire) {
          a.expire();
          nextExpire = time.now + 100_000_000L;
        }
      }
      long cpu = threads.getCurrentThreadCpuTime() - cpu0;
      long alloc = threads.getThreadAllocatedBytes(tid) - alloc0;
      long n = spans[0] - spans0;
      System.out.printf("round %d: %d spans, %.3f us CPU/span, %d bytes allocated/span, in flight %d%n", r, n,
          cpu / 1000.0 / n, alloc / n, a.inFlight());
    }
    System.out.println("(sink " + sink[0] + ")");
  }
}
