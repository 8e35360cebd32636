package io.gospan.receiver.event;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * The two ends of a connection as seen from the traced process ({@code local} is its own end), read by the
 * BPF program from the kernel socket behind the connection's fd: a TCP 4-tuple ({@link Ip} ends), or a
 * unix domain socket's inode and its peer's ({@link Unix} ends). The two processes of one connection see
 * mirrored pairs ({@link #reversed()}).
 */
public record SocketPair(Endpoint local, Endpoint remote) {

  /** One end of a connection. */
  public sealed interface Endpoint permits Ip, Unix {}

  /** A TCP end: IP address and port. */
  public record Ip(InetSocketAddress address) implements Endpoint {
    public Ip {
      Objects.requireNonNull(address, "address");
    }

    // equals and hashCode written out, here and in SocketPair: span assembly looks up ends in hash
    // maps for every event, where a record's generated methods (method-handle chains) showed in the
    // profile (docs/benchmarks.md)
    @Override
    public boolean equals(Object o) {
      return o instanceof Ip ip && ip.address.equals(address);
    }

    @Override
    public int hashCode() {
      return address.hashCode();
    }
  }

  /**
   * A unix domain socket: its inode number ({@code socket:[inode]} in {@code /proc/<pid>/fd}), which names
   * it on the whole host, and its path when known: the name it is bound to ({@code sun_path}; an abstract
   * name shown as {@code @name}), empty when unnamed (a client's end) or not read. Equal by inode: the path
   * is read from one end of a connection only.
   */
  public record Unix(long inode, String path) implements Endpoint {
    public Unix {
      Objects.requireNonNull(path, "path");
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Unix u && u.inode == inode;
    }

    @Override
    public int hashCode() {
      return Long.hashCode(inode);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SocketPair p && p.local.equals(local) && p.remote.equals(remote);
  }

  @Override
  public int hashCode() {
    return 31 * local.hashCode() + remote.hashCode();
  }

  public SocketPair {
    Objects.requireNonNull(local, "local");
    Objects.requireNonNull(remote, "remote");
    if (local.getClass() != remote.getClass()) {
      throw new IllegalArgumentException("ends of different kinds: " + local + ", " + remote);
    }
  }

  /** A TCP connection's 4-tuple. */
  public SocketPair(InetSocketAddress local, InetSocketAddress remote) {
    this(new Ip(local), new Ip(remote));
  }

  /**
   * This end's TCP address.
   *
   * @throws IllegalStateException for a unix domain socket's pair
   */
  public InetSocketAddress localIp() {
    return ip(local);
  }

  /**
   * The other end's TCP address.
   *
   * @throws IllegalStateException for a unix domain socket's pair
   */
  public InetSocketAddress remoteIp() {
    return ip(remote);
  }

  private static InetSocketAddress ip(Endpoint e) {
    if (e instanceof Ip ip) {
      return ip.address();
    }
    throw new IllegalStateException("not a TCP end: " + e);
  }

  /** Whether this is a unix domain socket's pair. */
  public boolean unix() {
    return local instanceof Unix;
  }

  /** The same connection as seen from the other end. */
  public SocketPair reversed() {
    return new SocketPair(remote, local);
  }
}
