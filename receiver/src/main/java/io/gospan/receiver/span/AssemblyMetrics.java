package io.gospan.receiver.span;

import io.opentelemetry.api.common.AttributeKey;

/**
 * The self-telemetry instruments {@link SpanAssembler} records on the {@code Meter} it is given:
 * long counters, and one long gauge ({@link #STREAMS_IN_FLIGHT}, observed at collection). No unit
 * is set; the names are gospan's metric names ({@code gospan_events_read_total} and so on in
 * Prometheus text).
 */
public enum AssemblyMetrics {
  /** Events handed to span assembly, by {@link #PROBE}. */
  EVENTS_READ("gospan.events.read", "Header events handed to span assembly"),
  /** Events (header events and StreamParents) rejected as malformed, by {@link #REASON}. */
  EVENTS_MALFORMED("gospan.events.malformed", "Events rejected as malformed"),
  /** A second start for a stream already in flight. */
  EVENTS_DUPLICATE("gospan.events.duplicate", "Repeated stream starts, ignored"),
  /** An end or mid-stream event for a stream not in flight (start lost, duplicate end, or already timed out). */
  EVENTS_UNMATCHED("gospan.events.unmatched", "Header events for streams not in flight"),
  /** Malformed {@code traceparent}/{@code tracestate} headers, ignored. */
  TRACEPARENT_MALFORMED("gospan.traceparent.malformed", "Malformed traceparent headers, ignored"),
  /** Streams not traced because {@code streams.max_in_flight} were already in flight. */
  STREAMS_OVERFLOW("gospan.streams.overflow", "Streams not traced: max_in_flight reached"),
  /** Spans ended without their end event, by {@link #REASON}. */
  SPANS_INCOMPLETE("gospan.spans.incomplete", "Spans ended without their end event"),
  /** Server spans made children of a client span gospan also traced. */
  SPANS_LINKED("gospan.spans.linked", "Server spans parented to a traced client span"),
  /**
   * Spans exported without waiting for their parent's trace id, and StreamParents dropped, because
   * {@code streams.max_pending_links} were already held.
   */
  LINKS_OVERFLOW("gospan.links.overflow", "Spans exported unlinked: max_pending_links reached"),
  /**
   * {@link io.gospan.receiver.event.StreamParent}s (a client stream's parent server stream in its
   * process), one count each, by {@link #RESULT}: {@code linked} (the client span became the server
   * span's child), {@code not_found} (no server stream with that key seen within {@code
   * streams.link_wait}), {@code stale} (the server stream ended before the client stream was
   * created, or started after it), {@code traceparent} (the application sent its own {@code
   * traceparent} on the client stream: it wins), {@code late} (the client span's parent was already
   * decided: a root, or a repeated StreamParent), {@code no_client} (the client stream's start not
   * seen within {@code streams.link_wait}), {@code overflow} (not held: {@code
   * streams.max_pending_links} reached).
   */
  LINKS_IN_PROCESS("gospan.links.in_process", "Parents of client streams inside their process, by result"),
  /** Streams in flight now (a gauge). */
  STREAMS_IN_FLIGHT("gospan.streams.in_flight", "Streams in flight");

  /** Attribute: the probe that produced the event, lower case ({@code loopy_writer_write_header}). */
  public static final AttributeKey<String> PROBE = AttributeKey.stringKey("probe");
  /** Attribute: why an event was malformed or a span incomplete. */
  public static final AttributeKey<String> REASON = AttributeKey.stringKey("reason");
  /** Attribute: what became of a StreamParent ({@link #LINKS_IN_PROCESS}). */
  public static final AttributeKey<String> RESULT = AttributeKey.stringKey("result");

  private final String metricName;
  private final String description;

  AssemblyMetrics(String metricName, String description) {
    this.metricName = metricName;
    this.description = description;
  }

  /** The instrument's name, e.g. {@code gospan.events.read}. */
  public String metricName() {
    return metricName;
  }

  public String description() {
    return description;
  }

  /** Whether the instrument is a gauge (else a monotonic counter). */
  public boolean gauge() {
    return this == STREAMS_IN_FLIGHT;
  }
}
