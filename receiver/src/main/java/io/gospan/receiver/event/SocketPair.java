package io.gospan.receiver.event;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * The TCP 4-tuple of a connection as seen from the traced process: {@code local} is its own end.
 * Resolved in user space from {@code /proc/<pid>/net/tcp*} via (pid, fd).
 */
public record SocketPair(InetSocketAddress local, InetSocketAddress remote) {
  public SocketPair {
    Objects.requireNonNull(local, "local");
    Objects.requireNonNull(remote, "remote");
  }

  /** The same connection as seen from the other end. */
  public SocketPair reversed() {
    return new SocketPair(remote, local);
  }
}
