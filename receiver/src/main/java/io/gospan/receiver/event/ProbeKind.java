package io.gospan.receiver.event;

/** The probe whose hit produced a {@link HeaderEvent}. See DESIGN.md, "Probe points". */
public enum ProbeKind {
  /** {@code (*loopyWriter).writeHeader}: client request headers; server response headers and trailers. */
  LOOPY_WRITER_WRITE_HEADER,
  /** {@code (*http2Client).operateHeaders}: client side, response headers and trailers. */
  HTTP2_CLIENT_OPERATE_HEADERS,
  /** {@code (*http2Server).operateHeaders}: server side, request headers. */
  HTTP2_SERVER_OPERATE_HEADERS,
  /** {@code hpack.(*Encoder).WriteField}: server side, fields as they are encoded (ServeHTTP path). */
  HPACK_ENCODER_WRITE_FIELD
}
