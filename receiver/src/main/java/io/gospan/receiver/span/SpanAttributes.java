package io.gospan.receiver.span;

import io.gospan.receiver.event.HeaderField;
import io.gospan.receiver.event.HeaderPolicy;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.event.SocketPair;
import io.grpc.Status;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * A span's attributes: the header fields a stream may export as metadata, and the attribute set
 * built from a {@link TracedStream} and its end (RPC method and status per {@link RpcSemconv},
 * server and peer addresses, metadata, {@code gospan.*} markers).
 *
 * <p>A header field becomes a {@code rpc.request.metadata.<name>} / {@code
 * rpc.response.metadata.<name>} attribute only when {@code headers.allow} lists it and {@link
 * HeaderPolicy} does not call it a credential. Spans of one method, status, authority and
 * connection with nothing else to say (most spans) share one {@link Attributes}, cached (least
 * recently used dropped first).
 *
 * <p>Not thread-safe: confined to {@link SpanAssembler}'s lock (package-private for that reason).
 */
final class SpanAttributes {
  private static final int CACHE_SIZE = 4096;

  /**
   * What a span's attributes are made of when it has no metadata, no truncated header and ended
   * complete: most spans.
   */
  private record CacheKey(Side side, String fullMethod, Status.Code status, String authority, SocketPair sockets) {
    /** Written out, as {@link StreamKey#equals}: looked up for every span. */
    @Override
    public int hashCode() {
      return ((Objects.hashCode(fullMethod) * 31 + Objects.hashCode(authority)) * 31 + Objects.hashCode(sockets)) * 31
          + (status == null ? -1 : status.ordinal()) * 2 + side.ordinal();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof CacheKey k && k.side == side && k.status == status
          && Objects.equals(k.fullMethod, fullMethod) && Objects.equals(k.authority, authority)
          && Objects.equals(k.sockets, sockets);
    }
  }

  private final RpcSemconv semconv;
  private final Set<String> allowHeaders;
  private final LinkedHashMap<CacheKey, Attributes> cache =
      new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<CacheKey, Attributes> eldest) {
          return size() > CACHE_SIZE;
        }
      };

  /** @param allowHeaders header names exported as metadata (credentials never are) */
  SpanAttributes(RpcSemconv semconv, Set<String> allowHeaders) {
    this.semconv = semconv;
    this.allowHeaders = allowHeaders;
  }

  /** Keeps {@code f} as request or response metadata of {@code s} when it may be exported. */
  void capture(TracedStream s, boolean request, HeaderField f) {
    String name = f.name();
    if (HeaderPolicy.mayExport(name, allowHeaders)) {
      Map<String, List<String>> into = request ? s.requestMetadata : s.responseMetadata;
      if (into.isEmpty()) {
        into = new TreeMap<>();
        if (request) {
          s.requestMetadata = into;
        } else {
          s.responseMetadata = into;
        }
      }
      into.computeIfAbsent(name, k -> new ArrayList<>(1)).add(f.value());
    }
  }

  /**
   * The attributes of the span of {@code s}.
   *
   * @param status its gRPC status, {@code null} when not seen
   * @param incompleteReason why it ended without its end event, {@code null} when it did not
   */
  Attributes of(TracedStream s, Status.Code status, String incompleteReason) {
    if (incompleteReason != null || s.truncated || !s.requestMetadata.isEmpty() || !s.responseMetadata.isEmpty()) {
      return build(s, status, incompleteReason);
    }
    CacheKey key = new CacheKey(s.side, s.fullMethod, status, s.authority, s.sockets);
    Attributes a = cache.get(key);
    if (a == null) {
      a = build(s, status, null);
      cache.put(key, a);
    }
    return a;
  }

  private Attributes build(TracedStream s, Status.Code status, String incompleteReason) {
    AttributesBuilder b = Attributes.builder();
    semconv.putSpanAttributes(b, s.side, s.fullMethod, status);

    SocketPair.Endpoint serverEnd = null;
    SocketPair.Endpoint peer = null;
    if (s.sockets != null) {
      serverEnd = s.side == Side.CLIENT ? s.sockets.remote() : s.sockets.local();
      peer = s.sockets.remote();
    }
    String[] authority = splitAuthority(s.authority);
    if (authority != null) {
      b.put(RpcAttributes.SERVER_ADDRESS, authority[0]);
      if (authority[1] != null) {
        b.put(RpcAttributes.SERVER_PORT, Long.parseLong(authority[1]));
      }
    } else if (serverEnd instanceof SocketPair.Ip ip) {
      b.put(RpcAttributes.SERVER_ADDRESS, hostAddress(ip.address()));
      b.put(RpcAttributes.SERVER_PORT, (long) ip.address().getPort());
    } else if (serverEnd instanceof SocketPair.Unix u && !u.path().isEmpty()) {
      b.put(RpcAttributes.SERVER_ADDRESS, u.path());
    }
    if (peer instanceof SocketPair.Ip ip) {
      InetSocketAddress p = ip.address();
      b.put(RpcAttributes.NETWORK_PEER_ADDRESS, hostAddress(p));
      b.put(RpcAttributes.NETWORK_PEER_PORT, (long) p.getPort());
      b.put(RpcAttributes.NETWORK_TRANSPORT, "tcp");
      b.put(RpcAttributes.NETWORK_TYPE, p.getAddress() instanceof Inet6Address ? "ipv6" : "ipv4");
      if (s.side == Side.SERVER) {
        b.put(RpcAttributes.CLIENT_ADDRESS, hostAddress(p));
        b.put(RpcAttributes.CLIENT_PORT, (long) p.getPort());
      }
    } else if (peer instanceof SocketPair.Unix u) {
      // semantic conventions: a unix domain socket's name is its address; an unnamed end has none
      b.put(RpcAttributes.NETWORK_TRANSPORT, "unix");
      if (!u.path().isEmpty()) {
        b.put(RpcAttributes.NETWORK_PEER_ADDRESS, u.path());
        if (s.side == Side.SERVER) {
          b.put(RpcAttributes.CLIENT_ADDRESS, u.path());
        }
      }
      String local = ((SocketPair.Unix) s.sockets.local()).path();
      if (!local.isEmpty()) {
        b.put(RpcAttributes.NETWORK_LOCAL_ADDRESS, local);
      }
    }
    if (s.socketUnknown != null) {
      b.put(RpcAttributes.GOSPAN_CONNECTION_UNIDENTIFIED, s.socketUnknown);
    }
    semconv.putMetadata(b, true, s.requestMetadata);
    semconv.putMetadata(b, false, s.responseMetadata);
    if (s.truncated) {
      b.put(RpcAttributes.GOSPAN_HEADERS_TRUNCATED, true);
    }
    if (incompleteReason != null) {
      b.put(RpcAttributes.GOSPAN_INCOMPLETE, true);
      b.put(RpcAttributes.GOSPAN_INCOMPLETE_REASON, incompleteReason);
    }
    return b.build();
  }

  private static String hostAddress(InetSocketAddress a) {
    return a.getAddress() != null ? a.getAddress().getHostAddress() : a.getHostString();
  }

  /** {@code pkg.Service/Method} from {@code /pkg.Service/Method}; {@code null} when it is not that shape. */
  static String fullMethod(String path) {
    if (path == null) {
      return null;
    }
    // the decoder hands the same String for a :path it has seen (its field cache): a span's method is
    // then not cut out of it again (a substring per span)
    int slot = System.identityHashCode(path) & (METHOD_SLOTS - 1);
    KnownMethod known = METHODS[slot];
    if (known != null && known.path == path) {
      return known.method;
    }
    String method = parseFullMethod(path);
    METHODS[slot] = new KnownMethod(path, method);
    return method;
  }

  private static final int METHOD_SLOTS = 256;
  /** Methods by their path's identity, direct-mapped; a slot is replaced whole (final fields: safe to race). */
  private static final KnownMethod[] METHODS = new KnownMethod[METHOD_SLOTS];

  private static final class KnownMethod {
    final String path;
    final String method;

    KnownMethod(String path, String method) {
      this.path = path;
      this.method = method;
    }
  }

  private static String parseFullMethod(String path) {
    if (path.length() < 4 || path.charAt(0) != '/') {
      return null;
    }
    int slash = path.indexOf('/', 1);
    if (slash <= 1 || slash == path.length() - 1 || path.indexOf('/', slash + 1) >= 0) {
      return null;
    }
    return path.substring(1);
  }

  /** [host, port-or-null] from an {@code :authority}; {@code null} when absent or unparseable. */
  static String[] splitAuthority(String authority) {
    if (authority == null || authority.isEmpty()) {
      return null;
    }
    String a = authority;
    int at = a.lastIndexOf('@');
    if (at >= 0) {
      a = a.substring(at + 1);
    }
    if (a.startsWith("[")) {
      int close = a.indexOf(']');
      if (close < 0) {
        return null;
      }
      String host = a.substring(1, close);
      String rest = a.substring(close + 1);
      return new String[] {host, rest.startsWith(":") && isPort(rest.substring(1)) ? rest.substring(1) : null};
    }
    int colon = a.lastIndexOf(':');
    if (colon >= 0 && a.indexOf(':') == colon) {
      String port = a.substring(colon + 1);
      return new String[] {a.substring(0, colon), isPort(port) ? port : null};
    }
    return new String[] {a, null};
  }

  private static boolean isPort(String s) {
    if (s.isEmpty() || s.length() > 5) {
      return false;
    }
    for (int i = 0; i < s.length(); i++) {
      if (!Character.isDigit(s.charAt(i))) {
        return false;
      }
    }
    int p = Integer.parseInt(s);
    return p > 0 && p <= 65535;
  }
}
