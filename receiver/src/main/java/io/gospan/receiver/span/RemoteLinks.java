package io.gospan.receiver.span;

import java.net.InetAddress;

/**
 * How span assembly reaches the other gospans, for a server span whose client span another gospan
 * traced (one gospan per pod or per host): implemented outside {@code span} (the link service,
 * {@code io.gospan.receiver.link}), handed to {@link SpanAssembler#remoteLinks}. The answer comes
 * back through {@link SpanAssembler#remoteParent}; the other direction, another gospan asking
 * this one, goes through {@link SpanAssembler#clientSpan}.
 */
public interface RemoteLinks {
  /**
   * Whether {@code address} is one of this gospan's own (an address of its network namespace, a
   * loopback address): a client there was traced by this gospan, if by any, so no other is asked.
   */
  boolean isLocal(InetAddress address);

  /**
   * Asks the gospan at {@code flow}'s client address for its client span of that call. Called
   * under the assembler's lock: it must not block (queue the question and return).
   *
   * @param serverStartEpochNanos when the server span started, Unix epoch ns: the answering gospan
   *     picks the client span that covers it; echoed back in {@link SpanAssembler#remoteParent}
   * @return whether the question was queued; {@code false} (e.g. the peer does not answer and is
   *     backed off) leaves the server span waiting {@code streams.link_wait} only
   */
  boolean lookup(ClientFlow flow, long serverStartEpochNanos);

  /**
   * How much longer than {@code streams.link_wait} a server span that was asked about waits for
   * the answer, ns: the answering gospan may itself wait up to its {@code link_wait} before its
   * client span's trace id is final (a call its process made outside any call it served), and the
   * answer needs time to come back.
   */
  long extraWaitNanos();
}
