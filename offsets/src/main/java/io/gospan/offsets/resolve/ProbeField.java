package io.gospan.offsets.resolve;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Every fact the probes read from a traced binary, named as in {@code struct go_offsets}
 * ({@code bpf/grpc_events.h}), with how it is found in DWARF and which probes need it.
 *
 * <p>Member offsets are paths through Go structs; a path with several (type, member) steps adds
 * the steps (e.g. {@code net.TCPConn.conn} + {@code net.conn.fd}). Facts: grpc-go
 * internal/transport (controlbuf.go, http2_client.go, http2_server.go, http_util.go), x/net
 * http2 (frame.go) and hpack (hpack.go), Go's net (tcpsock.go, net.go, fd_posix.go),
 * internal/poll (fd_unix.go) and crypto/tls (conn.go).
 */
public enum ProbeField {
  WRITE_HEADER_L(Kind.ARGUMENT, Probe.LOOPY_WRITER_WRITE_HEADER, "l", 0),
  WRITE_HEADER_STREAM_ID(Kind.ARGUMENT, Probe.LOOPY_WRITER_WRITE_HEADER, "streamID", 0),
  WRITE_HEADER_END_STREAM(Kind.ARGUMENT, Probe.LOOPY_WRITER_WRITE_HEADER, "endStream", 0),
  WRITE_HEADER_HF_PTR(Kind.ARGUMENT, Probe.LOOPY_WRITER_WRITE_HEADER, "hf", 0),
  WRITE_HEADER_HF_LEN(Kind.ARGUMENT, Probe.LOOPY_WRITER_WRITE_HEADER, "hf", 1),
  CLIENT_OPERATE_HEADERS_T(Kind.ARGUMENT, Probe.HTTP2_CLIENT_OPERATE_HEADERS, "t", 0),
  CLIENT_OPERATE_HEADERS_FRAME(Kind.ARGUMENT, Probe.HTTP2_CLIENT_OPERATE_HEADERS, "frame", 0),
  SERVER_OPERATE_HEADERS_T(Kind.ARGUMENT, Probe.HTTP2_SERVER_OPERATE_HEADERS, "t", 0),
  /** grpc-go 1.60 added a ctx argument before frame: found by name, not position. */
  SERVER_OPERATE_HEADERS_FRAME(Kind.ARGUMENT, Probe.HTTP2_SERVER_OPERATE_HEADERS, "frame", 0),

  LOOPY_WRITER_SIDE(Kind.MEMBER, needs(Probe.LOOPY_WRITER_WRITE_HEADER), false, transport("loopyWriter"), "side"),
  /** loopyWriter.conn exists in newer grpc-go only; older ones reach the conn through the framer. */
  LOOPY_WRITER_CONN(Kind.MEMBER, needs(), true, transport("loopyWriter"), "conn"),
  LOOPY_WRITER_FRAMER(Kind.MEMBER, needs(), true, transport("loopyWriter"), "framer"),
  FRAMER_WRITER(Kind.MEMBER, needs(), true, transport("framer"), "writer"),
  BUF_WRITER_CONN(Kind.MEMBER, needs(), true, transport("bufWriter"), "conn"),
  HTTP2_CLIENT_CONN(Kind.MEMBER, needs(Probe.HTTP2_CLIENT_OPERATE_HEADERS), false, transport("http2Client"), "conn"),
  HTTP2_SERVER_CONN(Kind.MEMBER, needs(Probe.HTTP2_SERVER_OPERATE_HEADERS), false, transport("http2Server"), "conn"),
  META_HEADERS_FRAME_HEADERS_FRAME(Kind.MEMBER, operateHeaders(), false, http2("MetaHeadersFrame"), "HeadersFrame"),
  META_HEADERS_FRAME_FIELDS(Kind.MEMBER, operateHeaders(), false, http2("MetaHeadersFrame"), "Fields"),
  HEADERS_FRAME_FLAGS(Kind.MEMBER, operateHeaders(), false, http2("HeadersFrame"), "FrameHeader", http2("FrameHeader"), "Flags"),
  HEADERS_FRAME_STREAM_ID(Kind.MEMBER, operateHeaders(), false, http2("HeadersFrame"), "FrameHeader", http2("FrameHeader"), "StreamID"),
  HEADER_FIELD_SIZE(Kind.SIZE, all(), false, "golang.org/x/net/http2/hpack.HeaderField"),
  HEADER_FIELD_NAME(Kind.MEMBER, all(), false, "golang.org/x/net/http2/hpack.HeaderField", "Name"),
  HEADER_FIELD_VALUE(Kind.MEMBER, all(), false, "golang.org/x/net/http2/hpack.HeaderField", "Value"),
  /** Socket identity (optional: without it events carry no 4-tuple). */
  TCP_CONN_FD(Kind.MEMBER, needs(), true, "net.TCPConn", "conn", "net.conn", "fd"),
  NET_FD_SYSFD(Kind.MEMBER, needs(), true, "net.netFD", "pfd", "internal/poll.FD", "Sysfd"),
  TLS_CONN_CONN(Kind.MEMBER, needs(), true, "crypto/tls.Conn", "conn"),
  SYSCALL_CONN_CONN(Kind.MEMBER, needs(), true, "google.golang.org/grpc/internal/credentials.syscallConn", "Conn"),
  /** h2c's wrapper of the hijacked connection (ServeHTTP over h2c): embeds the net.Conn. */
  H2C_BUF_CONN_CONN(Kind.MEMBER, needs(), true, "golang.org/x/net/http2/h2c.bufConn", "Conn"),
  ITAB_TCP_CONN(Kind.ITAB, needs(), true, "*net.TCPConn,net.Conn"),
  ITAB_TLS_CONN(Kind.ITAB, needs(), true, "*crypto/tls.Conn,net.Conn"),
  ITAB_SYSCALL_CONN(Kind.ITAB, needs(), true, "*google.golang.org/grpc/internal/credentials.syscallConn,net.Conn"),
  ITAB_H2C_BUF_CONN(Kind.ITAB, needs(), true, "*golang.org/x/net/http2/h2c.bufConn,net.Conn"),

  // The ServeHTTP path, per HTTP/2 server copy (struct http_server_offsets xnet / nethttp):
  // x/net http2 server.go, write.go, frame.go, hpack/encode.go; net/http h2_bundle.go.
  XNET_PROCESS_HEADERS_SC(Kind.ARGUMENT, Probe.XNET_PROCESS_HEADERS, "sc", 0),
  XNET_PROCESS_HEADERS_F(Kind.ARGUMENT, Probe.XNET_PROCESS_HEADERS, "f", 0),
  XNET_WRITE_FRAME_W(Kind.ARGUMENT, Probe.XNET_WRITE_RES_HEADERS, "w", 0),
  /** The writeContext interface's data word: the *serverConn. */
  XNET_WRITE_FRAME_CTX(Kind.ARGUMENT, Probe.XNET_WRITE_RES_HEADERS, "ctx", 1),
  XNET_WRITE_HEADER_BLOCK_CTX(Kind.ARGUMENT, Probe.XNET_WRITE_HEADER_BLOCK, "ctx", 1),
  XNET_WRITE_FIELD_E(Kind.ARGUMENT, Probe.XNET_HPACK_WRITE_FIELD, "e", 0),
  /** HeaderField is passed by value: Name's pointer and length, then Value's. */
  XNET_WRITE_FIELD_NAME_PTR(Kind.ARGUMENT, Probe.XNET_HPACK_WRITE_FIELD, "f", 0),
  XNET_WRITE_FIELD_NAME_LEN(Kind.ARGUMENT, Probe.XNET_HPACK_WRITE_FIELD, "f", 1),
  XNET_WRITE_FIELD_VALUE_PTR(Kind.ARGUMENT, Probe.XNET_HPACK_WRITE_FIELD, "f", 2),
  XNET_WRITE_FIELD_VALUE_LEN(Kind.ARGUMENT, Probe.XNET_HPACK_WRITE_FIELD, "f", 3),
  XNET_SERVER_CONN_CONN(Kind.MEMBER, needs(Probe.XNET_PROCESS_HEADERS, Probe.XNET_WRITE_RES_HEADERS), false, "golang.org/x/net/http2.serverConn", "conn"),
  XNET_SERVER_CONN_HPACK_ENCODER(Kind.MEMBER, needs(Probe.XNET_WRITE_RES_HEADERS, Probe.XNET_WRITE_HEADER_BLOCK), false, "golang.org/x/net/http2.serverConn", "hpackEncoder"),
  XNET_WRITE_RES_HEADERS_STREAM_ID(Kind.MEMBER, needs(Probe.XNET_WRITE_RES_HEADERS), false, "golang.org/x/net/http2.writeResHeaders", "streamID"),
  XNET_WRITE_RES_HEADERS_END_STREAM(Kind.MEMBER, needs(Probe.XNET_WRITE_RES_HEADERS), false, "golang.org/x/net/http2.writeResHeaders", "endStream"),
  XNET_META_HEADERS_FRAME_HEADERS_FRAME(Kind.MEMBER, needs(Probe.XNET_PROCESS_HEADERS), false, "golang.org/x/net/http2.MetaHeadersFrame", "HeadersFrame"),
  XNET_META_HEADERS_FRAME_FIELDS(Kind.MEMBER, needs(Probe.XNET_PROCESS_HEADERS), false, "golang.org/x/net/http2.MetaHeadersFrame", "Fields"),
  XNET_HEADERS_FRAME_FLAGS(Kind.MEMBER, needs(Probe.XNET_PROCESS_HEADERS), false, "golang.org/x/net/http2.HeadersFrame", "FrameHeader", "golang.org/x/net/http2.FrameHeader", "Flags"),
  XNET_HEADERS_FRAME_STREAM_ID(Kind.MEMBER, needs(Probe.XNET_PROCESS_HEADERS), false, "golang.org/x/net/http2.HeadersFrame", "FrameHeader", "golang.org/x/net/http2.FrameHeader", "StreamID"),
  XNET_HEADER_FIELD_SIZE(Kind.SIZE, needs(Probe.XNET_PROCESS_HEADERS), false, "golang.org/x/net/http2/hpack.HeaderField"),
  XNET_HEADER_FIELD_NAME(Kind.MEMBER, needs(Probe.XNET_PROCESS_HEADERS), false, "golang.org/x/net/http2/hpack.HeaderField", "Name"),
  XNET_HEADER_FIELD_VALUE(Kind.MEMBER, needs(Probe.XNET_PROCESS_HEADERS), false, "golang.org/x/net/http2/hpack.HeaderField", "Value"),
  NETHTTP_PROCESS_HEADERS_SC(Kind.ARGUMENT, Probe.NETHTTP_PROCESS_HEADERS, "sc", 0),
  NETHTTP_PROCESS_HEADERS_F(Kind.ARGUMENT, Probe.NETHTTP_PROCESS_HEADERS, "f", 0),
  NETHTTP_WRITE_FRAME_W(Kind.ARGUMENT, Probe.NETHTTP_WRITE_RES_HEADERS, "w", 0),
  /** The writeContext interface's data word: the *serverConn. */
  NETHTTP_WRITE_FRAME_CTX(Kind.ARGUMENT, Probe.NETHTTP_WRITE_RES_HEADERS, "ctx", 1),
  NETHTTP_WRITE_HEADER_BLOCK_CTX(Kind.ARGUMENT, Probe.NETHTTP_WRITE_HEADER_BLOCK, "ctx", 1),
  NETHTTP_WRITE_FIELD_E(Kind.ARGUMENT, Probe.NETHTTP_HPACK_WRITE_FIELD, "e", 0),
  /** HeaderField is passed by value: Name's pointer and length, then Value's. */
  NETHTTP_WRITE_FIELD_NAME_PTR(Kind.ARGUMENT, Probe.NETHTTP_HPACK_WRITE_FIELD, "f", 0),
  NETHTTP_WRITE_FIELD_NAME_LEN(Kind.ARGUMENT, Probe.NETHTTP_HPACK_WRITE_FIELD, "f", 1),
  NETHTTP_WRITE_FIELD_VALUE_PTR(Kind.ARGUMENT, Probe.NETHTTP_HPACK_WRITE_FIELD, "f", 2),
  NETHTTP_WRITE_FIELD_VALUE_LEN(Kind.ARGUMENT, Probe.NETHTTP_HPACK_WRITE_FIELD, "f", 3),
  NETHTTP_SERVER_CONN_CONN(Kind.MEMBER, needs(Probe.NETHTTP_PROCESS_HEADERS, Probe.NETHTTP_WRITE_RES_HEADERS), false, "net/http.http2serverConn", "conn"),
  NETHTTP_SERVER_CONN_HPACK_ENCODER(Kind.MEMBER, needs(Probe.NETHTTP_WRITE_RES_HEADERS, Probe.NETHTTP_WRITE_HEADER_BLOCK), false, "net/http.http2serverConn", "hpackEncoder"),
  NETHTTP_WRITE_RES_HEADERS_STREAM_ID(Kind.MEMBER, needs(Probe.NETHTTP_WRITE_RES_HEADERS), false, "net/http.http2writeResHeaders", "streamID"),
  NETHTTP_WRITE_RES_HEADERS_END_STREAM(Kind.MEMBER, needs(Probe.NETHTTP_WRITE_RES_HEADERS), false, "net/http.http2writeResHeaders", "endStream"),
  NETHTTP_META_HEADERS_FRAME_HEADERS_FRAME(Kind.MEMBER, needs(Probe.NETHTTP_PROCESS_HEADERS), false, "net/http.http2MetaHeadersFrame", "http2HeadersFrame"),
  NETHTTP_META_HEADERS_FRAME_FIELDS(Kind.MEMBER, needs(Probe.NETHTTP_PROCESS_HEADERS), false, "net/http.http2MetaHeadersFrame", "Fields"),
  NETHTTP_HEADERS_FRAME_FLAGS(Kind.MEMBER, needs(Probe.NETHTTP_PROCESS_HEADERS), false, "net/http.http2HeadersFrame", "http2FrameHeader", "net/http.http2FrameHeader", "Flags"),
  NETHTTP_HEADERS_FRAME_STREAM_ID(Kind.MEMBER, needs(Probe.NETHTTP_PROCESS_HEADERS), false, "net/http.http2HeadersFrame", "http2FrameHeader", "net/http.http2FrameHeader", "StreamID"),
  NETHTTP_HEADER_FIELD_SIZE(Kind.SIZE, needs(Probe.NETHTTP_PROCESS_HEADERS), false, "vendor/golang.org/x/net/http2/hpack.HeaderField"),
  NETHTTP_HEADER_FIELD_NAME(Kind.MEMBER, needs(Probe.NETHTTP_PROCESS_HEADERS), false, "vendor/golang.org/x/net/http2/hpack.HeaderField", "Name"),
  NETHTTP_HEADER_FIELD_VALUE(Kind.MEMBER, needs(Probe.NETHTTP_PROCESS_HEADERS), false, "vendor/golang.org/x/net/http2/hpack.HeaderField", "Value");

  /** How a field is found. */
  public enum Kind {
    /** A word of a function argument at entry: an {@link ArgLocation}. */
    ARGUMENT,
    /** A byte offset into a Go struct (sum of the path's steps). */
    MEMBER,
    /** The byte size of a Go type. */
    SIZE,
    /** The link-time address of a Go itab. */
    ITAB
  }

  private final Kind kind;
  private final Set<Probe> neededBy;
  private final boolean optional;
  /** ARGUMENT: [parameter name]; MEMBER: type, member[, type, member...]; SIZE: type; ITAB: name. */
  private final List<String> path;
  private final int piece;

  ProbeField(Kind kind, Probe probe, String parameter, int piece) {
    this.kind = kind;
    this.neededBy = EnumSet.of(probe);
    this.optional = false;
    this.path = List.of(parameter);
    this.piece = piece;
  }

  ProbeField(Kind kind, Set<Probe> neededBy, boolean optional, String... path) {
    this.kind = kind;
    this.neededBy = neededBy;
    this.optional = optional;
    this.path = List.of(path);
    this.piece = 0;
  }

  private static String transport(String type) {
    return "google.golang.org/grpc/internal/transport." + type;
  }

  private static String http2(String type) {
    return "golang.org/x/net/http2." + type;
  }

  private static Set<Probe> needs(Probe... probes) {
    return probes.length == 0 ? EnumSet.noneOf(Probe.class) : EnumSet.of(probes[0], probes);
  }

  /**
   * Whether the offsets catalog covers this field. The ServeHTTP path's fields come from the
   * binary's DWARF only (the catalog generator does not yet build a ServeHTTP program), so
   * stripped binaries do not get those probes.
   */
  public boolean catalogued() {
    return !name().startsWith("XNET_") && !name().startsWith("NETHTTP_") && this != H2C_BUF_CONN_CONN;
  }

  /** The HTTP/2 server copy ({@code struct http_server_offsets}) this field belongs to; null for the rest. */
  public Probe.HttpServer server() {
    return name().startsWith("XNET_") ? Probe.HttpServer.XNET : name().startsWith("NETHTTP_") ? Probe.HttpServer.NETHTTP : null;
  }

  private static Set<Probe> operateHeaders() {
    return EnumSet.of(Probe.HTTP2_CLIENT_OPERATE_HEADERS, Probe.HTTP2_SERVER_OPERATE_HEADERS);
  }

  private static Set<Probe> all() {
    return Probe.grpcTransport();
  }

  public Kind kind() {
    return kind;
  }

  /** Probes that cannot be attached without this field. */
  public Set<Probe> neededBy() {
    return neededBy;
  }

  /** An optional field only degrades events (e.g. no socket 4-tuple) when missing. */
  public boolean optional() {
    return optional;
  }

  /** The function whose argument this is (ARGUMENT only). */
  public Probe probe() {
    return neededBy.iterator().next();
  }

  /** See the field comment: parameter name, member path steps, type name, or itab name. */
  public List<String> path() {
    return path;
  }

  /** Word of the argument (0: first; a slice's len is 1). */
  public int piece() {
    return piece;
  }

  /** The field's name in {@code struct go_offsets}. */
  public String cName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
