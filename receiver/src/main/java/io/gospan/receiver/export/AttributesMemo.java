package io.gospan.receiver.export;

import io.opentelemetry.api.common.Attributes;
import java.util.function.ToLongFunction;

/**
 * A size computed from an attribute set, remembered by the set's identity, direct-mapped (64
 * slots): span assembly shares one set among the spans of a method, status and connection, so
 * walking its attributes once per set instead of once per span saves ~0.3 µs a span (a profile).
 * An entry is immutable, so a thread sees a whole one or another; threads sharing a memo get the
 * same numbers.
 */
final class AttributesMemo {
  private record Sized(Attributes attributes, long size) {}

  private final Sized[] slots = new Sized[64];
  private final ToLongFunction<Attributes> size;

  AttributesMemo(ToLongFunction<Attributes> size) {
    this.size = size;
  }

  /** {@code size} of {@code a}, computed once while {@code a} holds its slot. */
  long size(Attributes a) {
    int slot = System.identityHashCode(a) & (slots.length - 1);
    Sized e = slots[slot];
    if (e != null && e.attributes() == a) {
      return e.size();
    }
    long n = size.applyAsLong(a);
    slots[slot] = new Sized(a, n);
    return n;
  }
}
