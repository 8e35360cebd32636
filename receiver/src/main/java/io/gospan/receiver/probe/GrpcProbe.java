package io.gospan.receiver.probe;

import io.gospan.offsets.resolve.Probe;

/**
 * The uprobes of {@code bpf/grpc.bpf.c}: the BPF program and the Go function it is attached to
 * (the function names are {@link Probe}'s, the offsets module's single list of probe points),
 * and the index of its counters ({@code enum gospan_probe}).
 */
public enum GrpcProbe {
  /** grpc-go internal/transport/controlbuf.go; both sides. */
  LOOPY_WRITER_WRITE_HEADER(0, "uprobe_loopy_writer_write_header", Probe.LOOPY_WRITER_WRITE_HEADER),
  /** grpc-go internal/transport/http2_client.go. */
  HTTP2_CLIENT_OPERATE_HEADERS(1, "uprobe_http2_client_operate_headers", Probe.HTTP2_CLIENT_OPERATE_HEADERS),
  /** grpc-go internal/transport/http2_server.go. */
  HTTP2_SERVER_OPERATE_HEADERS(2, "uprobe_http2_server_operate_headers", Probe.HTTP2_SERVER_OPERATE_HEADERS),
  // The ServeHTTP path (x/net http2 server.go, write.go, hpack/encode.go; net/http h2_bundle.go).
  XNET_HPACK_WRITE_FIELD(3, "uprobe_xnet_hpack_write_field", Probe.XNET_HPACK_WRITE_FIELD),
  XNET_PROCESS_HEADERS(4, "uprobe_xnet_process_headers", Probe.XNET_PROCESS_HEADERS),
  XNET_WRITE_RES_HEADERS(5, "uprobe_xnet_write_res_headers", Probe.XNET_WRITE_RES_HEADERS),
  XNET_WRITE_HEADER_BLOCK(6, "uprobe_xnet_write_header_block", Probe.XNET_WRITE_HEADER_BLOCK),
  NETHTTP_HPACK_WRITE_FIELD(7, "uprobe_nethttp_hpack_write_field", Probe.NETHTTP_HPACK_WRITE_FIELD),
  NETHTTP_PROCESS_HEADERS(8, "uprobe_nethttp_process_headers", Probe.NETHTTP_PROCESS_HEADERS),
  NETHTTP_WRITE_RES_HEADERS(9, "uprobe_nethttp_write_res_headers", Probe.NETHTTP_WRITE_RES_HEADERS),
  NETHTTP_WRITE_HEADER_BLOCK(10, "uprobe_nethttp_write_header_block", Probe.NETHTTP_WRITE_HEADER_BLOCK);

  private final int id;
  private final String program;
  private final Probe probe;

  GrpcProbe(int id, String program, Probe probe) {
    this.id = id;
    this.program = program;
    this.probe = probe;
  }

  /** The BPF program's name in grpc.bpf.o. */
  public String program() {
    return program;
  }

  /** The Go function's symbol name. */
  public String function() {
    return probe.function();
  }

  /** The probe point in the offsets module. */
  public Probe probe() {
    return probe;
  }

  /** {@code enum gospan_probe} value: the index of the probe's counters. */
  public int id() {
    return id;
  }
}
