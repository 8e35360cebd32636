package io.gospan.receiver.span;

import io.gospan.receiver.event.ProbeKind;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * Span assembly's self-telemetry: the {@link AssemblyMetrics} instruments, created on one {@link
 * Meter}, and the counts the parts of {@link SpanAssembler} record on them.
 *
 * <p>Events read (by {@link ProbeKind}) and server spans linked are counted for every event and
 * span as plain numbers, observed by {@link AssemblyMetrics#EVENTS_READ} and {@link
 * AssemblyMetrics#SPANS_LINKED}'s callbacks under the assembler's lock (a synchronous counter's
 * {@code add} looks its series up by attributes on every call: ~0.1 µs, several per span). The
 * in-flight gauge reads a volatile the assembler updates.
 *
 * <p>Recorded only under {@link SpanAssembler}'s lock (package-private for that reason); the
 * callbacks take that lock.
 */
final class AssemblyCounters {
  private static final Map<ProbeKind, Attributes> PROBE_ATTRIBUTES = new EnumMap<>(ProbeKind.class);

  static {
    for (ProbeKind k : ProbeKind.values()) {
      PROBE_ATTRIBUTES.put(k, Attributes.of(AssemblyMetrics.PROBE, k.name().toLowerCase(Locale.ROOT)));
    }
  }

  private final long[] eventsRead = new long[ProbeKind.values().length];
  private long linked;
  private volatile int inFlight;
  private final LongCounter malformed;
  private final LongCounter duplicate;
  private final LongCounter unmatched;
  private final LongCounter traceparentMalformed;
  private final LongCounter streamsOverflow;
  private final LongCounter incomplete;
  private final LongCounter linkOverflow;
  private final LongCounter inProcessLinks;

  /** @param lock the assembler's lock, taken by the observing callbacks */
  AssemblyCounters(Meter meter, Object lock) {
    meter.counterBuilder(AssemblyMetrics.EVENTS_READ.metricName()).setDescription(AssemblyMetrics.EVENTS_READ.description())
        .buildWithCallback(r -> {
          long[] read;
          synchronized (lock) {
            read = eventsRead.clone();
          }
          for (ProbeKind k : ProbeKind.values()) {
            if (read[k.ordinal()] > 0) { // a series appears with its first event, as a synchronous counter's
              r.record(read[k.ordinal()], PROBE_ATTRIBUTES.get(k));
            }
          }
        });
    malformed = counter(meter, AssemblyMetrics.EVENTS_MALFORMED);
    duplicate = counter(meter, AssemblyMetrics.EVENTS_DUPLICATE);
    unmatched = counter(meter, AssemblyMetrics.EVENTS_UNMATCHED);
    traceparentMalformed = counter(meter, AssemblyMetrics.TRACEPARENT_MALFORMED);
    streamsOverflow = counter(meter, AssemblyMetrics.STREAMS_OVERFLOW);
    incomplete = counter(meter, AssemblyMetrics.SPANS_INCOMPLETE);
    meter.counterBuilder(AssemblyMetrics.SPANS_LINKED.metricName()).setDescription(AssemblyMetrics.SPANS_LINKED.description())
        .buildWithCallback(r -> {
          long n;
          synchronized (lock) {
            n = linked;
          }
          if (n > 0) {
            r.record(n);
          }
        });
    linkOverflow = counter(meter, AssemblyMetrics.LINKS_OVERFLOW);
    inProcessLinks = counter(meter, AssemblyMetrics.LINKS_IN_PROCESS);
    meter
        .gaugeBuilder(AssemblyMetrics.STREAMS_IN_FLIGHT.metricName())
        .setDescription(AssemblyMetrics.STREAMS_IN_FLIGHT.description())
        .ofLongs()
        .buildWithCallback(r -> r.record(inFlight));
  }

  private static LongCounter counter(Meter meter, AssemblyMetrics m) {
    return meter.counterBuilder(m.metricName()).setDescription(m.description()).build();
  }

  void eventRead(ProbeKind probe) {
    eventsRead[probe.ordinal()]++;
  }

  void serverSpanLinked() {
    linked++;
  }

  void inFlight(int streams) {
    inFlight = streams;
  }

  void malformed(String reason) {
    malformed.add(1, Attributes.of(AssemblyMetrics.REASON, reason));
  }

  void duplicate() {
    duplicate.add(1);
  }

  void unmatched(long events) {
    unmatched.add(events);
  }

  void traceparentMalformed() {
    traceparentMalformed.add(1);
  }

  void streamsOverflow() {
    streamsOverflow.add(1);
  }

  void incomplete(String reason) {
    incomplete.add(1, Attributes.of(AssemblyMetrics.REASON, reason));
  }

  void linkOverflow() {
    linkOverflow.add(1);
  }

  void inProcessLink(Attributes result) {
    inProcessLinks.add(1, result);
  }
}
