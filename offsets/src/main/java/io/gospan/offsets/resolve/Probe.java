package io.gospan.offsets.resolve;

/** The grpc-go functions gospan probes (package google.golang.org/grpc/internal/transport). */
public enum Probe {
  LOOPY_WRITER_WRITE_HEADER("google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader"),
  HTTP2_CLIENT_OPERATE_HEADERS("google.golang.org/grpc/internal/transport.(*http2Client).operateHeaders"),
  HTTP2_SERVER_OPERATE_HEADERS("google.golang.org/grpc/internal/transport.(*http2Server).operateHeaders");

  private final String function;

  Probe(String function) {
    this.function = function;
  }

  /** The Go symbol name of the probed function. */
  public String function() {
    return function;
  }
}
