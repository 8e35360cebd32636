package io.gospan.offsets.resolve;

import java.util.EnumSet;
import java.util.Set;

/**
 * The functions gospan probes: grpc-go's own HTTP/2 transport (package
 * google.golang.org/grpc/internal/transport), and, for gRPC served through an HTTP/2 server's
 * {@code ServeHTTP} (grpc-go internal/transport/handler_server.go), that server's HTTP/2 code:
 * golang.org/x/net/http2 (h2c, {@code http2.ConfigureServer}) or the copy bundled in net/http
 * (Go src/net/http/h2_bundle.go, names prefixed {@code http2}).
 */
public enum Probe {
  LOOPY_WRITER_WRITE_HEADER("google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader", null),
  HTTP2_CLIENT_OPERATE_HEADERS("google.golang.org/grpc/internal/transport.(*http2Client).operateHeaders", null),
  HTTP2_SERVER_OPERATE_HEADERS("google.golang.org/grpc/internal/transport.(*http2Server).operateHeaders", null),
  XNET_PROCESS_HEADERS("golang.org/x/net/http2.(*serverConn).processHeaders", HttpServer.XNET),
  XNET_WRITE_RES_HEADERS("golang.org/x/net/http2.(*writeResHeaders).writeFrame", HttpServer.XNET),
  XNET_WRITE_HEADER_BLOCK("golang.org/x/net/http2.(*writeResHeaders).writeHeaderBlock", HttpServer.XNET),
  /** Also every grpc-go transport's header encoder: attached only where the ServeHTTP path serves gRPC. */
  XNET_HPACK_WRITE_FIELD("golang.org/x/net/http2/hpack.(*Encoder).WriteField", HttpServer.XNET),
  NETHTTP_PROCESS_HEADERS("net/http.(*http2serverConn).processHeaders", HttpServer.NETHTTP),
  NETHTTP_WRITE_RES_HEADERS("net/http.(*http2writeResHeaders).writeFrame", HttpServer.NETHTTP),
  NETHTTP_WRITE_HEADER_BLOCK("net/http.(*http2writeResHeaders).writeHeaderBlock", HttpServer.NETHTTP),
  NETHTTP_HPACK_WRITE_FIELD("vendor/golang.org/x/net/http2/hpack.(*Encoder).WriteField", HttpServer.NETHTTP);

  /** The HTTP/2 server copy a ServeHTTP-path probe belongs to. */
  public enum HttpServer {
    /** golang.org/x/net/http2. */
    XNET,
    /** net/http's bundled http2. */
    NETHTTP
  }

  private final String function;
  private final HttpServer server;

  Probe(String function, HttpServer server) {
    this.function = function;
    this.server = server;
  }

  /** The probes of grpc-go's own transport (every grpc-go binary has them). */
  public static Set<Probe> grpcTransport() {
    return EnumSet.of(LOOPY_WRITER_WRITE_HEADER, HTTP2_CLIENT_OPERATE_HEADERS, HTTP2_SERVER_OPERATE_HEADERS);
  }

  /** Whether this probe serves the ServeHTTP path (and which server copy: {@link #server()}). */
  public boolean serveHttp() {
    return server != null;
  }

  /** The server copy of a ServeHTTP-path probe; null for grpc-go transport probes. */
  public HttpServer server() {
    return server;
  }

  /** The hpack WriteField probe of a server copy. */
  public static Probe writeField(HttpServer server) {
    return server == HttpServer.XNET ? XNET_HPACK_WRITE_FIELD : NETHTTP_HPACK_WRITE_FIELD;
  }

  /** The hpack WriteField probe: a hit per header field of every encoder, attached lazily. */
  public boolean writeField() {
    return this == XNET_HPACK_WRITE_FIELD || this == NETHTTP_HPACK_WRITE_FIELD;
  }

  /** The Go symbol name of the probed function. */
  public String function() {
    return function;
  }
}
