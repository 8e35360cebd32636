package io.gospan.receiver.metrics;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * Transitional adapter: the span assembler's counters, exposed as observable instruments on the
 * SDK {@link Meter} given to {@link #attach} (gospan's meter {@code io.gospan}, read by the OTLP
 * metric reader and by {@code /metrics}, the SDK's Prometheus reader). Everything else in gospan
 * records on that {@link Meter} directly; this class goes once {@code SpanAssembler} takes a
 * {@link Meter} itself.
 *
 * <p>Two ways to feed it:
 *
 * <ul>
 *   <li>{@link #counter} — a counter gospan code increments ({@code counter(...).add(1, attrs)}).
 *   <li>{@link #observeCounter} / {@link #observeGauge} — a callback read at collection time, for
 *       values that live elsewhere, e.g. the BPF per-probe counters ({@code events lost}) read from a
 *       map: {@code telemetry.observeCounter(SelfTelemetry.EVENTS_LOST, "...", r -> r.record(n,
 *       Attributes.of(SelfTelemetry.PROBE, "loopy_writer_write_header")))}. Counter callbacks report
 *       cumulative totals.
 * </ul>
 */
public final class SelfTelemetry {
  public static final AttributeKey<String> PROBE = AttributeKey.stringKey("probe");
  public static final AttributeKey<String> REASON = AttributeKey.stringKey("reason");
  public static final AttributeKey<String> SIDE = AttributeKey.stringKey("side");

  /** Events handed to span assembly, by {@code probe}. */
  public static final String EVENTS_READ = "gospan.events.read";
  /** Events lost before reaching user space (BPF counters; fed by the ring-buffer reader), by {@code probe}. */
  public static final String EVENTS_LOST = "gospan.events.lost";
  /** Events rejected as malformed, by {@code reason}. */
  public static final String EVENTS_MALFORMED = "gospan.events.malformed";
  /** A second start for a stream already in flight. */
  public static final String EVENTS_DUPLICATE = "gospan.events.duplicate";
  /** An end or mid-stream event for a stream not in flight (start lost, duplicate end, or already timed out). */
  public static final String EVENTS_UNMATCHED = "gospan.events.unmatched";
  /** Malformed {@code traceparent}/{@code tracestate} headers, ignored. */
  public static final String TRACEPARENT_MALFORMED = "gospan.traceparent.malformed";
  public static final String STREAMS_IN_FLIGHT = "gospan.streams.in_flight";
  /** Streams not traced because {@code streams.max_in_flight} were already in flight. */
  public static final String STREAMS_OVERFLOW = "gospan.streams.overflow";
  /** Spans ended without their end event, by {@code reason}. */
  public static final String SPANS_INCOMPLETE = "gospan.spans.incomplete";
  /** Server spans made children of a client span gospan also traced. */
  public static final String SPANS_LINKED = "gospan.spans.linked";
  /** Server spans exported unlinked because {@code streams.max_pending_links} were already held. */
  public static final String LINKS_OVERFLOW = "gospan.links.overflow";
  // Spans exported and dropped (queue full, export failed) are the SDK BatchSpanProcessor's own
  // metrics: otel.sdk.processor.span.processed{error.type}, otel.sdk.processor.span.queue.size.
  public static final String PROCESSES_TRACED = "gospan.processes.traced";
  /** Probes attached / refused (fed by the attacher), by {@code probe} and {@code reason}. */
  public static final String PROBES_ATTACHED = "gospan.probes.attached";
  public static final String PROBES_REFUSED = "gospan.probes.refused";

  /** Receives observed values in a callback. */
  public interface Recorder {
    void record(long value, Attributes attributes);

    default void record(long value) {
      record(value, Attributes.empty());
    }
  }

  private enum Kind {
    COUNTER,
    GAUGE
  }

  private record Observed(String name, String description, Kind kind, Consumer<Recorder> callback) {}

  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final List<Observed> observed = new CopyOnWriteArrayList<>();
  private volatile Meter meter;

  /** A monotonically increasing count, per attribute set. */
  public final class Counter {
    private final String name;
    private final String description;
    private final Map<Attributes, LongAdder> values = new ConcurrentHashMap<>();

    private Counter(String name, String description) {
      this.name = name;
      this.description = description;
    }

    public void add(long n, Attributes attributes) {
      values.computeIfAbsent(attributes, a -> new LongAdder()).add(n);
    }

    public void add(long n) {
      add(n, Attributes.empty());
    }

    public void increment() {
      add(1, Attributes.empty());
    }

    public void increment(Attributes attributes) {
      add(1, attributes);
    }

    /** The count for exactly these attributes. */
    public long value(Attributes attributes) {
      LongAdder a = values.get(attributes);
      return a == null ? 0 : a.sum();
    }

    /** The count over every attribute set. */
    public long total() {
      long t = 0;
      for (LongAdder a : values.values()) {
        t += a.sum();
      }
      return t;
    }

    private void observe(Recorder r) {
      values.forEach((attrs, adder) -> r.record(adder.sum(), attrs));
    }
  }

  /** The counter named {@code name}, created on first use. */
  public Counter counter(String name, String description) {
    Counter c = counters.get(name);
    if (c != null) {
      return c;
    }
    synchronized (this) {
      c = counters.get(name);
      if (c == null) {
        c = new Counter(name, description);
        counters.put(name, c);
        Meter m = meter;
        if (m != null) {
          register(m, new Observed(name, description, Kind.COUNTER, c::observe));
        }
      }
      return c;
    }
  }

  /** The counter named {@code name}; it must have been created (empty description otherwise). */
  public Counter counter(String name) {
    return counter(name, "");
  }

  /** A cumulative counter whose values {@code callback} reports at each collection. */
  public synchronized void observeCounter(String name, String description, Consumer<Recorder> callback) {
    Observed o = new Observed(name, description, Kind.COUNTER, callback);
    observed.add(o);
    if (meter != null) {
      register(meter, o);
    }
  }

  /** A gauge whose values {@code callback} reports at each collection. */
  public synchronized void observeGauge(String name, String description, Consumer<Recorder> callback) {
    Observed o = new Observed(name, description, Kind.GAUGE, callback);
    observed.add(o);
    if (meter != null) {
      register(meter, o);
    }
  }

  /** Exports everything, present and future, through {@code meter} (OTLP). */
  public synchronized void attach(Meter meter) {
    if (this.meter != null) {
      throw new IllegalStateException("already attached");
    }
    this.meter = meter;
    counters.values().forEach(c -> register(meter, new Observed(c.name, c.description, Kind.COUNTER, c::observe)));
    observed.forEach(o -> register(meter, o));
  }

  private static void register(Meter meter, Observed o) {
    Consumer<ObservableLongMeasurement> cb = m -> o.callback().accept(m::record);
    if (o.kind() == Kind.COUNTER) {
      meter.counterBuilder(o.name()).setDescription(o.description()).buildWithCallback(cb);
    } else {
      meter.gaugeBuilder(o.name()).setDescription(o.description()).ofLongs().buildWithCallback(cb);
    }
  }
}
