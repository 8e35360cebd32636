package io.gospan.receiver.span;

import io.gospan.receiver.event.Side;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * Ended spans waiting for their trace id, at most {@code streams.max_pending_links} of them: the
 * {@link EndedSpan} rides on its {@link SpanIdentity} ({@code heldEnd}), this set holds the nodes
 * and counts server and client spans (the assembler's {@code heldServerSpans} / {@code
 * heldClientSpans}).
 *
 * <p>Not thread-safe: confined to {@link SpanAssembler}'s lock (package-private for that reason).
 */
final class HeldSpans {
  private final LinkedHashSet<SpanIdentity> held = new LinkedHashSet<>();
  private final int max;
  private int servers;

  HeldSpans(int max) {
    this.max = max;
  }

  /**
   * Attaches {@code end} to the undecided {@code node} and holds it, or, when the bound is
   * reached, only attaches it and returns {@code false}: the caller then decides the node now,
   * which emits it.
   */
  boolean hold(SpanIdentity node, EndedSpan end) {
    node.heldEnd = end;
    if (held.size() >= max) {
      return false;
    }
    held.add(node);
    if (end.stream().side == Side.SERVER) {
      servers++;
    }
    return true;
  }

  /** Detaches and returns the end attached to {@code node} (held or not), or {@code null}. */
  EndedSpan release(SpanIdentity node) {
    EndedSpan end = node.heldEnd;
    if (end == null) {
      return null;
    }
    node.heldEnd = null;
    if (held.remove(node) && end.stream().side == Side.SERVER) {
      servers--;
    }
    return end;
  }

  boolean contains(SpanIdentity node) {
    return held.contains(node);
  }

  /** The held nodes, oldest first (a copy). */
  List<SpanIdentity> nodes() {
    return List.copyOf(held);
  }

  int servers() {
    return servers;
  }

  int clients() {
    return held.size() - servers;
  }
}
