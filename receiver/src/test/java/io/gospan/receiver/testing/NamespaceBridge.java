package io.gospan.receiver.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Test helper: a TCP port inside a network namespace made by the test that leads to a TCP
 * address of this JVM's (the root) namespace, so that processes in the namespace can reach a
 * collector or a fake peer the test runs on 127.0.0.1, with no address or route added to the
 * root namespace. A child JVM runs in the namespace ({@code ip netns exec NS java ...
 * NamespaceBridge LISTEN=SOCKET}): it listens on {@code LISTEN} there and pipes every connection
 * to a unix socket; unix sockets are not bound to a network namespace, so this JVM accepts them
 * and pipes each to the target's TCP address (asked for each new connection: {@link
 * #closeConnections()} makes clients reconnect to a new one). Bytes are copied, never read.
 */
public final class NamespaceBridge implements AutoCloseable {
  private final Process child;
  private final ServerSocketChannel unix;
  private final Path socket;
  private final Thread acceptor;
  private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();

  private NamespaceBridge(Process child, ServerSocketChannel unix, Path socket, Supplier<InetSocketAddress> target) {
    this.child = child;
    this.unix = unix;
    this.socket = socket;
    this.acceptor = new Thread(() -> {
      while (unix.isOpen()) {
        try {
          SocketChannel in = unix.accept();
          SocketChannel out = SocketChannel.open(target.get());
          open.add(in);
          open.add(out);
          pipe(in, out, open);
        } catch (IOException e) {
          if (!unix.isOpen()) {
            return;
          }
        }
      }
    }, "netns-bridge-" + socket.getFileName());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /**
   * Listens on {@code listen} inside network namespace {@code netns}; each connection there is
   * piped to {@code target} here.
   */
  public static NamespaceBridge start(String netns, InetSocketAddress listen, Supplier<InetSocketAddress> target) {
    try {
      Path socket = Files.createTempFile("gospan-bridge-", ".sock");
      Files.delete(socket);
      ServerSocketChannel unix = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      unix.bind(UnixDomainSocketAddress.of(socket));
      List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", netns,
          Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xmx32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss256k",
          "-cp", System.getProperty("java.class.path"), NamespaceBridge.class.getName(),
          listen.getAddress().getHostAddress() + ":" + listen.getPort() + "=" + socket));
      Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
      String line = r.readLine();
      if (!"ready".equals(line)) {
        child.destroyForcibly();
        unix.close();
        throw new AssertionError("the bridge into " + netns + " did not start: " + line);
      }
      return new NamespaceBridge(child, unix, socket, target);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Closes the connections piped so far (their clients reconnect, to the target of that time). */
  public void closeConnections() {
    for (SocketChannel c : open) {
      try {
        c.close();
      } catch (IOException ignored) {
        // closed already
      }
    }
    open.clear();
  }

  @Override
  public void close() throws Exception {
    child.destroy();
    child.waitFor(10, TimeUnit.SECONDS);
    unix.close();
    closeConnections();
    Files.deleteIfExists(socket);
  }

  /** Copies both ways until either side closes. */
  static void pipe(SocketChannel a, SocketChannel b, Set<SocketChannel> open) {
    Runnable closeBoth = () -> {
      for (SocketChannel c : List.of(a, b)) {
        try {
          c.close();
        } catch (IOException ignored) {
          // closed already
        }
        if (open != null) {
          open.remove(c);
        }
      }
    };
    for (SocketChannel[] dir : new SocketChannel[][] {{a, b}, {b, a}}) {
      Thread t = new Thread(() -> {
        ByteBuffer buf = ByteBuffer.allocate(32 << 10);
        try {
          while (dir[0].read(buf) >= 0) {
            buf.flip();
            while (buf.hasRemaining()) {
              dir[1].write(buf);
            }
            buf.clear();
          }
        } catch (IOException ignored) {
          // either side closed
        } finally {
          closeBoth.run();
        }
      }, "netns-pipe");
      t.setDaemon(true);
      t.start();
    }
  }

  /** The child: {@code HOST:PORT=UNIX_SOCKET}, run inside the namespace. Prints {@code ready} once listening. */
  public static void main(String[] args) throws Exception {
    String[] parts = args[0].split("=", 2);
    int colon = parts[0].lastIndexOf(':');
    InetSocketAddress listen = new InetSocketAddress(parts[0].substring(0, colon), Integer.parseInt(parts[0].substring(colon + 1)));
    UnixDomainSocketAddress to = UnixDomainSocketAddress.of(parts[1]);
    ServerSocketChannel server = ServerSocketChannel.open();
    server.bind(listen);
    System.out.println("ready");
    System.out.flush();
    Thread parent = new Thread(() -> { // the test JVM gone (its end of our stdin closed): exit
      try {
        while (System.in.read() >= 0) {
          // nothing is sent
        }
      } catch (IOException ignored) {
        // closed
      }
      System.exit(0);
    });
    parent.setDaemon(true);
    parent.start();
    while (true) {
      SocketChannel in = server.accept();
      try {
        SocketChannel out = SocketChannel.open(StandardProtocolFamily.UNIX);
        out.connect(to);
        pipe(in, out, null);
      } catch (IOException e) {
        in.close();
      }
    }
  }
}
