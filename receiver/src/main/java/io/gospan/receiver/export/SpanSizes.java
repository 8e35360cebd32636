package io.gospan.receiver.export;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.Collection;
import java.util.List;

/**
 * An upper estimate of the heap a queued span holds, in bytes, for the in-memory export queue's
 * bound (64-bit JVM, compressed references): a fixed part for the span object, its two span
 * contexts with their hex id strings, status and timestamps; per attribute its two slots in the
 * attribute array and its value (a string as its own object and bytes, one per character, as
 * the decoder makes a new string per event; a number boxed). Attribute keys are constants shared
 * by every span, and the resource and instrumentation scope are shared by a process's spans: not
 * counted. Span assembly shares one {@code Attributes} between spans of one method, status and
 * connection: in a collection, an {@code Attributes} instance is counted once. {@code
 * SpanSizesTest} checks it against the heap 20,000 assembled spans retain.
 */
final class SpanSizes {
  /** The span object, 2 SpanContexts (with 32- and 16-character id strings), StatusData, the attribute array. */
  static final long SPAN_BASE = 384;
  /** An attribute's two slots in the attribute array, with slack. */
  static final long ATTRIBUTE_BASE = 16;

  /**
   * Attribute sets' sizes by identity: every span is estimated twice (entering and leaving the
   * queue), by two threads.
   */
  private static final AttributesMemo SIZED = new AttributesMemo(SpanSizes::sizeOf);

  private SpanSizes() {}

  static long estimate(Collection<SpanData> spans) {
    long n = 0;
    java.util.Set<Attributes> counted = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    for (SpanData s : spans) {
      n += estimate(s, counted);
    }
    return n;
  }

  static long estimate(SpanData s) {
    return estimate(s, java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>()));
  }

  /**
   * One span without its attribute set: what {@link SpanAdmission} adds when a span enters the
   * span processor's queue and takes off when it leaves, the same number both ways; it counts the
   * attribute set ({@link #attributes(Attributes)}) once while any waiting span holds it.
   */
  static long estimateWithoutAttributes(SpanData s) {
    return estimate(s, null);
  }

  /** An attribute set's estimated heap, bytes; the same number for the same instance (remembered by identity). */
  static long attributes(Attributes a) {
    return SIZED.size(a);
  }

  /** {@code counted}: the attribute sets counted already (shared ones count once); null: none counted here. */
  private static long estimate(SpanData s, java.util.Set<Attributes> counted) {
    long n = SPAN_BASE + s.getName().length()
        + (counted != null && counted.add(s.getAttributes()) ? SIZED.size(s.getAttributes()) : 0);
    if (s.getStatus().getDescription() != null) {
      n += 48 + s.getStatus().getDescription().length();
    }
    for (EventData e : s.getEvents()) {
      n += 96 + e.getName().length() + sizeOf(e.getAttributes());
    }
    for (LinkData l : s.getLinks()) {
      n += 192 + sizeOf(l.getAttributes());
    }
    return n;
  }

  private static long sizeOf(Attributes a) {
    long[] n = {0};
    a.forEach((AttributeKey<?> k, Object v) -> n[0] += ATTRIBUTE_BASE + valueSize(v));
    return n[0];
  }

  private static long valueSize(Object v) {
    if (v instanceof String s) {
      return 40 + s.length();
    }
    if (v instanceof List<?> l) {
      long n = 32;
      for (Object o : l) {
        n += 16 + valueSize(o);
      }
      return n;
    }
    return 16;
  }
}
