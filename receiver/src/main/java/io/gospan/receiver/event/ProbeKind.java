package io.gospan.receiver.event;

/** The probe whose hit produced a {@link HeaderEvent}. See DESIGN.md, "Probe points". */
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
  HTTP2_SERVER_WRITE_RES_HEADERS
}
