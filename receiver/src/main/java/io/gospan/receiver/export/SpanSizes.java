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
 * bound: a fixed part for the span, its two span contexts (ids kept as hex strings), status and
 * timestamps, plus each attribute's entry, key and value (strings as one byte per character, plus
 * the object headers of a 64-bit JVM with compressed references). The resource and the
 * instrumentation scope are shared by many spans and not counted.
 */
final class SpanSizes {
  /** SpanData, 2 SpanContexts with their id strings, StatusData, the attribute container. */
  static final long SPAN_BASE = 512;
  /** An attribute's slot, key object and value object, besides the characters. */
  static final long ATTRIBUTE_BASE = 96;

  private SpanSizes() {}

  static long estimate(Collection<SpanData> spans) {
    long n = 0;
    for (SpanData s : spans) {
      n += estimate(s);
    }
    return n;
  }

  static long estimate(SpanData s) {
    long n = SPAN_BASE + s.getName().length() + attributes(s.getAttributes());
    if (s.getStatus().getDescription() != null) {
      n += 48 + s.getStatus().getDescription().length();
    }
    for (EventData e : s.getEvents()) {
      n += 96 + e.getName().length() + attributes(e.getAttributes());
    }
    for (LinkData l : s.getLinks()) {
      n += 192 + attributes(l.getAttributes());
    }
    return n;
  }

  private static long attributes(Attributes a) {
    long[] n = {0};
    a.forEach((AttributeKey<?> k, Object v) -> n[0] += ATTRIBUTE_BASE + k.getKey().length() + valueSize(v));
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
