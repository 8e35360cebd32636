package io.gospan.receiver.span;

import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.SocketPair;

/**
 * A call as both its ends see it: the client's own end of the connection and the HTTP/2 stream
 * id. For TCP the client's end is its socket address (IP, port); the server's address is left
 * out: a DNAT in between (a Kubernetes ClusterIP, kube-proxy) makes the client see the service's
 * address and the server its own, while both see the same client address unless something
 * source-NATs it. For a unix domain socket it is the client socket's inode, which the server
 * sees as its peer's inode (unique on the host; such a call is only ever linked locally). Time
 * proximity (the server's start within the client span) tells a reused client port apart.
 */
record FlowKey(SocketPair.Endpoint clientEnd, int streamId) {
  /**
   * Mixed ({@link RecentEnds#hash}): the record's default ({@code 31 × endpoint + stream id})
   * puts the streams of a client's few connections, whose ports (and so endpoint hashes) are
   * close and whose stream ids are consecutive odd numbers, into the same few hash buckets.
   */
  @Override
  public int hashCode() {
    return RecentEnds.hash(streamId, 0, clientEnd.hashCode());
  }

  /** Written out, as {@link StreamKey#equals}. */
  @Override
  public boolean equals(Object o) {
    return o instanceof FlowKey k && k.streamId == streamId && k.clientEnd.equals(clientEnd);
  }

  /** The flow of a stream seen from {@code side} with sockets {@code s}; {@code null} when the sockets are unknown. */
  static FlowKey of(Side side, SocketPair s, int streamId) {
    if (s == null) {
      return null;
    }
    return new FlowKey(side == Side.CLIENT ? s.local() : s.remote(), streamId);
  }

  /** The flow another gospan names (a TCP client address and stream id). */
  static FlowKey of(ClientFlow flow) {
    return new FlowKey(new SocketPair.Ip(flow.client()), flow.streamId());
  }
}
