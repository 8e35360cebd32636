package io.gospan.receiver.span;

import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.HeaderField;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.SocketPair;
import io.gospan.receiver.event.StreamParent;
import io.gospan.receiver.event.StreamParentVia;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the header events grpc-go produces for one connection, one per probe hit. A unary call
 * that succeeds: the client's {@code loopyWriter.writeHeader} (request headers: the client span's
 * start), the server's {@code http2Server.operateHeaders} (the same headers: the server span's
 * start), the server's {@code loopyWriter.writeHeader} for the response headers and then for the
 * trailers (END_STREAM: the server span's end), the client's {@code http2Client.operateHeaders}
 * for the response headers and then for the trailers (END_STREAM: the client span's end). A call
 * that fails before any response sends trailers only: one END_STREAM block with {@code :status}
 * and {@code grpc-status}. Only a stream's start carries the socket 4-tuple.
 */
public final class Events {
  public static final String PATH = "/helloworld.Greeter/SayHello";
  public static final int CLIENT_PID = 100;
  public static final int SERVER_PID = 200;

  public final int clientPid;
  public final int serverPid;
  public final long clientConn;
  public final long serverConn;
  public final SocketPair clientSockets;
  public final SocketPair serverSockets;
  public String path = PATH;
  public List<HeaderField> extraRequest = new ArrayList<>();

  public Events(int clientPort) {
    this(CLIENT_PID, SERVER_PID, 0xc000_1000L + clientPort, 0xc000_2000L + clientPort, clientPort);
  }

  public Events(int clientPid, int serverPid, long clientConn, long serverConn, int clientPort) {
    this.clientPid = clientPid;
    this.serverPid = serverPid;
    this.clientConn = clientConn;
    this.serverConn = serverConn;
    InetSocketAddress c = addr("10.0.0.1", clientPort);
    InetSocketAddress s = addr("10.0.0.2", 50051);
    this.clientSockets = new SocketPair(c, s);
    this.serverSockets = new SocketPair(s, c);
  }

  /**
   * A connection whose ends see different addresses for the server: the client connects to {@code
   * service} (a Kubernetes ClusterIP, say) and a DNAT delivers it to the server at 10.0.0.2:50051;
   * both ends see the client at 10.0.0.1:{@code clientPort}.
   */
  public static Events throughDnat(int clientPort, InetSocketAddress service) {
    Events e = new Events(clientPort);
    return new Events(e.clientPid, e.serverPid, e.clientConn, e.serverConn,
        new SocketPair(e.clientSockets.localIp(), service), e.serverSockets);
  }

  /** A connection whose ends are given (e.g. a unix domain socket's: {@link SocketPair.Unix}). */
  public Events(int clientPid, int serverPid, long clientConn, long serverConn, SocketPair clientSockets) {
    this(clientPid, serverPid, clientConn, serverConn, clientSockets,
        clientSockets == null ? null : clientSockets.reversed());
  }

  /** A connection whose two ends see the pairs given (they differ through a NAT). */
  public Events(int clientPid, int serverPid, long clientConn, long serverConn, SocketPair clientSockets,
      SocketPair serverSockets) {
    this.clientPid = clientPid;
    this.serverPid = serverPid;
    this.clientConn = clientConn;
    this.serverConn = serverConn;
    this.clientSockets = clientSockets;
    this.serverSockets = serverSockets;
  }

  /**
   * A unix domain socket connection as the probes see it: the client's end unnamed (inode {@code
   * clientInode}), the server's accepted socket (inode {@code serverInode}) bound to {@code path}; the
   * client reads the path from its peer, the server from its own end.
   */
  public static Events unix(long clientInode, long serverInode, String path) {
    SocketPair client = new SocketPair(new SocketPair.Unix(clientInode, ""), new SocketPair.Unix(serverInode, path));
    return new Events(CLIENT_PID, SERVER_PID, 0xc000_1000L, 0xc000_2000L, client);
  }

  public static InetSocketAddress addr(String ip, int port) {
    try {
      return new InetSocketAddress(InetAddress.getByName(ip), port);
    } catch (UnknownHostException e) {
      throw new AssertionError(e);
    }
  }

  public Events path(String p) {
    this.path = p;
    return this;
  }

  public Events withRequestHeader(String name, String value) {
    extraRequest.add(HeaderField.of(name, value));
    return this;
  }

  public List<HeaderField> request() {
    List<HeaderField> f = new ArrayList<>();
    f.add(HeaderField.of(":method", "POST"));
    f.add(HeaderField.of(":scheme", "http"));
    if (path != null) {
      f.add(HeaderField.of(":path", path));
    }
    f.add(HeaderField.of(":authority", "greeter.example:50051"));
    f.add(HeaderField.of("content-type", "application/grpc"));
    f.add(HeaderField.of("te", "trailers"));
    f.addAll(extraRequest);
    return f;
  }

  public static List<HeaderField> responseHeaders() {
    return List.of(HeaderField.of(":status", "200"), HeaderField.of("content-type", "application/grpc"));
  }

  public static List<HeaderField> trailers(int status, String message) {
    List<HeaderField> f = new ArrayList<>();
    f.add(HeaderField.of("grpc-status", Integer.toString(status)));
    if (message != null) {
      f.add(HeaderField.of("grpc-message", message));
    }
    return f;
  }

  public static List<HeaderField> trailersOnly(int status, String message) {
    List<HeaderField> f = new ArrayList<>(responseHeaders());
    f.addAll(trailers(status, message));
    return f;
  }

  // Only a stream's start carries the 4-tuple: the probes read the socket once per stream.

  public HeaderEvent clientStart(int stream, long t) {
    return ev(clientPid, t, ProbeKind.LOOPY_WRITER_WRITE_HEADER, Side.CLIENT, clientConn, clientSockets, stream, false, request());
  }

  public HeaderEvent clientHeaders(int stream, long t) {
    return ev(clientPid, t, ProbeKind.HTTP2_CLIENT_OPERATE_HEADERS, Side.CLIENT, clientConn, null, stream, false,
        responseHeaders());
  }

  public HeaderEvent clientTrailers(int stream, long t, int status, String message) {
    return ev(clientPid, t, ProbeKind.HTTP2_CLIENT_OPERATE_HEADERS, Side.CLIENT, clientConn, null, stream, true,
        trailers(status, message));
  }

  public HeaderEvent clientTrailersOnly(int stream, long t, int status, String message) {
    return ev(clientPid, t, ProbeKind.HTTP2_CLIENT_OPERATE_HEADERS, Side.CLIENT, clientConn, null, stream, true,
        trailersOnly(status, message));
  }

  public HeaderEvent serverStart(int stream, long t) {
    return ev(serverPid, t, ProbeKind.HTTP2_SERVER_OPERATE_HEADERS, Side.SERVER, serverConn, serverSockets, stream, false,
        request());
  }

  public HeaderEvent serverHeaders(int stream, long t) {
    return ev(serverPid, t, ProbeKind.LOOPY_WRITER_WRITE_HEADER, Side.SERVER, serverConn, null, stream, false,
        responseHeaders());
  }

  public HeaderEvent serverTrailers(int stream, long t, int status, String message) {
    return ev(serverPid, t, ProbeKind.LOOPY_WRITER_WRITE_HEADER, Side.SERVER, serverConn, null, stream, true,
        trailers(status, message));
  }

  public HeaderEvent serverTrailersOnly(int stream, long t, int status, String message) {
    return ev(serverPid, t, ProbeKind.LOOPY_WRITER_WRITE_HEADER, Side.SERVER, serverConn, null, stream, true,
        trailersOnly(status, message));
  }

  // The streams probe set: the client's start at NewStream's return (:path from the stream, the
  // socket, no other header), the ends at closeStream / writeStatus with the status grpc-go holds
  // (grpc-status, a raw grpc-message).

  public HeaderEvent clientNewStream(int stream, long t) {
    List<HeaderField> f = new ArrayList<>();
    if (path != null) {
      f.add(HeaderField.of(":path", path));
    }
    return ev(clientPid, t, ProbeKind.HTTP2_CLIENT_NEW_STREAM, Side.CLIENT, clientConn, clientSockets, stream, false, f);
  }

  public HeaderEvent clientCloseStream(int stream, long t, int status, String message) {
    return ev(clientPid, t, ProbeKind.HTTP2_CLIENT_CLOSE_STREAM, Side.CLIENT, clientConn, null, stream, true,
        trailers(status, message));
  }

  public HeaderEvent serverWriteStatus(int stream, long t, int status, String message) {
    return ev(serverPid, t, ProbeKind.HTTP2_SERVER_WRITE_STATUS, Side.SERVER, serverConn, null, stream, true,
        trailers(status, message));
  }

  /**
   * The {@link StreamParent} of this connection's client stream {@code stream}: server stream
   * {@code parentStream} of {@code parent}'s server side, which must run in this client's process.
   *
   * @param t when the client stream was created (its {@code NewStream} returned), ns
   */
  public StreamParent streamParent(int stream, long t, Events parent, int parentStream) {
    if (parent.serverPid != clientPid) {
      throw new IllegalArgumentException("an in-process parent runs in the client's process");
    }
    return new StreamParent(
        clientPid, clientPid + 1, t, clientConn, stream, parent.serverConn, parentStream, StreamParentVia.GOROUTINE);
  }

  public static HeaderEvent ev(
      int pid, long t, ProbeKind probe, Side side, long conn, SocketPair sockets, int stream, boolean end, List<HeaderField> f) {
    return new HeaderEvent(pid, pid + 1, t, probe, side, conn, 7, sockets, stream, end, f, false);
  }
}
