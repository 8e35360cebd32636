package io.gospan.receiver.probe;

import io.gospan.offsets.resolve.Probe;
import io.gospan.receiver.event.ProbeKind;

/**
 * The uprobes of {@code bpf/grpc.bpf.c}: the BPF program and the Go function it is attached to
 * (the function names are {@link Probe}'s, the offsets module's single list of probe points).
 */
public enum GrpcProbe {
  /** grpc-go internal/transport/controlbuf.go; both sides. */
  LOOPY_WRITER_WRITE_HEADER(
      ProbeKind.LOOPY_WRITER_WRITE_HEADER,
      "uprobe_loopy_writer_write_header",
      Probe.LOOPY_WRITER_WRITE_HEADER.function()),
  /** grpc-go internal/transport/http2_client.go. */
  HTTP2_CLIENT_OPERATE_HEADERS(
      ProbeKind.HTTP2_CLIENT_OPERATE_HEADERS,
      "uprobe_http2_client_operate_headers",
      Probe.HTTP2_CLIENT_OPERATE_HEADERS.function()),
  /** grpc-go internal/transport/http2_server.go. */
  HTTP2_SERVER_OPERATE_HEADERS(
      ProbeKind.HTTP2_SERVER_OPERATE_HEADERS,
      "uprobe_http2_server_operate_headers",
      Probe.HTTP2_SERVER_OPERATE_HEADERS.function());

  private final ProbeKind kind;
  private final String program;
  private final String function;

  GrpcProbe(ProbeKind kind, String program, String function) {
    this.kind = kind;
    this.program = program;
    this.function = function;
  }

  public ProbeKind kind() {
    return kind;
  }

  /** The BPF program's name in grpc.bpf.o. */
  public String program() {
    return program;
  }

  /** The Go function's symbol name. */
  public String function() {
    return function;
  }

  /** {@code enum gospan_probe} value: the index of the probe's counters. */
  public int id() {
    return kind.ordinal();
  }
}
