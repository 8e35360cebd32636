package io.gospan.receiver.span;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * A call as both of its ends see it: the client's socket address and the HTTP/2 stream id. The
 * server's address is not part of it, since a DNAT between the two ends (a Kubernetes ClusterIP)
 * changes it; the client's address is the same on both ends unless something source-NATs it.
 *
 * @param client the client's end of the TCP connection (IP address and port), as the client's
 *     socket has it locally and the server's socket has it as its peer
 * @param streamId the HTTP/2 stream id, 1 to 2^31-1
 */
public record ClientFlow(InetSocketAddress client, int streamId) {
  public ClientFlow {
    Objects.requireNonNull(client, "client");
    if (client.getAddress() == null) {
      throw new IllegalArgumentException("unresolved client address " + client);
    }
    if (streamId <= 0) {
      throw new IllegalArgumentException("stream id " + streamId + " is not 1 to 2^31-1");
    }
  }
}
