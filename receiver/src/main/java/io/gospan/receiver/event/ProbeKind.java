package io.gospan.receiver.event;

/**
 * What a {@link HeaderEvent} records: which headers of which side, as the probe that produced it
 * sees them. Each BPF probe that sends records names its kind in C ({@code GOSPAN_EVENT} in
 * bpf/transport.bpf.h, bpf/serve_http.bpf.h); two probes may send one kind (the same function
 * in two HTTP/2 server copies: the decoder tells which probe sent a record).
 *
 * <p>A unary call on grpc-go's own transport produces, on the client, {@link
 * #LOOPY_WRITER_WRITE_HEADER} (request headers, the span's start) and {@link
 * #HTTP2_CLIENT_OPERATE_HEADERS} twice (response headers, then trailers with END_STREAM: its
 * end); on the server, {@link #HTTP2_SERVER_OPERATE_HEADERS} (request headers: the start) and
 * {@link #LOOPY_WRITER_WRITE_HEADER} twice (response headers, then trailers with END_STREAM: the
 * end). Response headers before the trailers are dropped in BPF unless extra header names are
 * captured. A server on the ServeHTTP path produces {@link #HTTP2_SERVER_PROCESS_HEADERS} and
 * {@link #HTTP2_SERVER_WRITE_RES_HEADERS} instead (grpc-go internal/transport/http2_client.go,
 * http2_server.go, controlbuf.go, handler_server.go).
 *
 * <p>That is the <em>headers</em> probe set. The <em>streams</em> set (register-ABI binaries by
 * default: fewer hits) gives a unary call on the client {@link #HTTP2_CLIENT_NEW_STREAM} (the start:
 * {@code :path} from the stream, the socket) and {@link #HTTP2_CLIENT_CLOSE_STREAM} (the end, with
 * END_STREAM: {@code grpc-status}, {@code grpc-message} from the status grpc-go closes the stream
 * with), on the server {@link #HTTP2_SERVER_OPERATE_HEADERS} (the start) and {@link
 * #HTTP2_SERVER_WRITE_STATUS} (the end, as the client's). Their {@code grpc-message} is not
 * percent-encoded (grpc-go's own string, not the header value).
 */
public enum ProbeKind {
  /** {@code (*loopyWriter).writeHeader}: client request headers; server response headers and trailers. */
  LOOPY_WRITER_WRITE_HEADER,
  /** {@code (*http2Client).operateHeaders}: client side, response headers and trailers. */
  HTTP2_CLIENT_OPERATE_HEADERS,
  /** {@code (*http2Server).operateHeaders}: server side, request headers. */
  HTTP2_SERVER_OPERATE_HEADERS,
  /**
   * An HTTP/2 server's {@code (*serverConn).processHeaders} (x/net or net/http's bundle): server
   * side, request headers of gRPC served through {@code ServeHTTP}, and of any other HTTP/2
   * request that server receives.
   */
  HTTP2_SERVER_PROCESS_HEADERS,
  /**
   * An HTTP/2 server's trailers block ({@code writeResHeaders} with endStream, fields from hpack
   * {@code WriteField}): server side, the end of a stream served through {@code ServeHTTP}.
   */
  HTTP2_SERVER_WRITE_RES_HEADERS,
  /**
   * {@code (*http2Client).NewStream} returning a stream (streams set): client side, the start, with
   * {@code :path} (grpc-go's {@code Stream.method}) and the socket; no {@code :authority}.
   */
  HTTP2_CLIENT_NEW_STREAM,
  /**
   * {@code (*http2Client).closeStream}, the first call for a stream (streams set): client side, the
   * end (END_STREAM), whatever ends the stream, with its status as {@code grpc-status} and a raw
   * {@code grpc-message}.
   */
  HTTP2_CLIENT_CLOSE_STREAM,
  /**
   * {@code (*http2Server).writeStatus} ({@code WriteStatus} before grpc-go v1.69; streams set): server
   * side, the end (END_STREAM): the handler's status as {@code grpc-status} and a raw {@code
   * grpc-message}.
   */
  HTTP2_SERVER_WRITE_STATUS;

  /** Whether this kind's {@code grpc-message} is grpc-go's own string, not a percent-encoded header value. */
  public boolean rawMessage() {
    return this == HTTP2_CLIENT_CLOSE_STREAM || this == HTTP2_SERVER_WRITE_STATUS;
  }
}
