package io.gospan.receiver.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.gospan.receiver.probe.GoOffsets;
import java.nio.file.Path;
import java.util.List;

/**
 * Test helper: a complete {@code struct go_offsets} for one binary built from what Go's own
 * debug/dwarf and debug/elf report (gotruth), the reference the Java resolver is compared to.
 */
public final class TruthOffsets {
  private TruthOffsets() {}

  public static final String TRANSPORT = "google.golang.org/grpc/internal/transport.";
  public static final String WRITE_HEADER = TRANSPORT + "(*loopyWriter).writeHeader";
  public static final String CLIENT_OPERATE_HEADERS = TRANSPORT + "(*http2Client).operateHeaders";
  public static final String SERVER_OPERATE_HEADERS = TRANSPORT + "(*http2Server).operateHeaders";

  static final String HTTP2 = "golang.org/x/net/http2.";
  static final List<String> STRUCTS =
      List.of(
          TRANSPORT + "loopyWriter",
          TRANSPORT + "framer",
          TRANSPORT + "bufWriter",
          TRANSPORT + "http2Client",
          TRANSPORT + "http2Server",
          HTTP2 + "MetaHeadersFrame",
          HTTP2 + "HeadersFrame",
          HTTP2 + "FrameHeader",
          "golang.org/x/net/http2/hpack.HeaderField",
          "net.TCPConn",
          "net.conn",
          "net.netFD",
          "internal/poll.FD",
          "crypto/tls.Conn",
          "google.golang.org/grpc/internal/credentials.syscallConn");

  /** gotruth's view of the functions and structs the probes need. */
  public static JsonNode truth(Path binary) {
    return GoTruth.query(binary, List.of(WRITE_HEADER, CLIENT_OPERATE_HEADERS, SERVER_OPERATE_HEADERS), STRUCTS);
  }

  /** Every field of struct go_offsets, from the binary's DWARF and symbol table. */
  public static GoOffsets forBinary(Path binary) {
    JsonNode t = truth(binary);
    JsonNode wh = GoTruth.params(t, WRITE_HEADER);
    JsonNode coh = GoTruth.params(t, CLIENT_OPERATE_HEADERS);
    JsonNode soh = GoTruth.params(t, SERVER_OPERATE_HEADERS);
    GoOffsets o =
        new GoOffsets()
            .location("write_header_l", GoTruth.location(wh, "l", 0))
            .location("write_header_stream_id", GoTruth.location(wh, "streamID", 0))
            .location("write_header_end_stream", GoTruth.location(wh, "endStream", 0))
            .location("write_header_hf_ptr", GoTruth.location(wh, "hf", 0))
            .location("write_header_hf_len", GoTruth.location(wh, "hf", 1))
            .location("client_operate_headers_t", GoTruth.location(coh, "t", 0))
            .location("client_operate_headers_frame", GoTruth.location(coh, "frame", 0))
            .location("server_operate_headers_t", GoTruth.location(soh, "t", 0))
            .location("server_operate_headers_frame", GoTruth.location(soh, "frame", 0))
            .offset("loopy_writer_side", member(t, TRANSPORT + "loopyWriter", "side"))
            .offset("loopy_writer_framer", member(t, TRANSPORT + "loopyWriter", "framer"))
            .offset("framer_writer", member(t, TRANSPORT + "framer", "writer"))
            .offset("buf_writer_conn", member(t, TRANSPORT + "bufWriter", "conn"))
            .offset("http2_client_conn", member(t, TRANSPORT + "http2Client", "conn"))
            .offset("http2_server_conn", member(t, TRANSPORT + "http2Server", "conn"))
            .offset("meta_headers_frame_headers_frame", member(t, HTTP2 + "MetaHeadersFrame", "HeadersFrame"))
            .offset("meta_headers_frame_fields", member(t, HTTP2 + "MetaHeadersFrame", "Fields"))
            .offset(
                "headers_frame_flags",
                member(t, HTTP2 + "HeadersFrame", "FrameHeader") + member(t, HTTP2 + "FrameHeader", "Flags"))
            .offset(
                "headers_frame_stream_id",
                member(t, HTTP2 + "HeadersFrame", "FrameHeader") + member(t, HTTP2 + "FrameHeader", "StreamID"))
            .offset("header_field_size", size(t, "golang.org/x/net/http2/hpack.HeaderField"))
            .offset("header_field_name", member(t, "golang.org/x/net/http2/hpack.HeaderField", "Name"))
            .offset("header_field_value", member(t, "golang.org/x/net/http2/hpack.HeaderField", "Value"))
            .offset("tcp_conn_fd", member(t, "net.TCPConn", "conn") + member(t, "net.conn", "fd"))
            .offset("net_fd_sysfd", member(t, "net.netFD", "pfd") + member(t, "internal/poll.FD", "Sysfd"))
            .offset("tls_conn_conn", member(t, "crypto/tls.Conn", "conn"))
            .offset("syscall_conn_conn", member(t, "google.golang.org/grpc/internal/credentials.syscallConn", "Conn"));
    Integer loopyConn = memberOrNull(t, TRANSPORT + "loopyWriter", "conn");
    if (loopyConn != null) {
      o.offset("loopy_writer_conn", loopyConn);
    }
    for (JsonNode itab : t.path("itabs")) {
      String name = itab.path("name").asText();
      long address = itab.path("address").asLong();
      if (name.endsWith(".*net.TCPConn,net.Conn")) {
        o.offset("itab_tcp_conn", address);
      } else if (name.endsWith(".*crypto/tls.Conn,net.Conn")) {
        o.offset("itab_tls_conn", address);
      } else if (name.endsWith("credentials.syscallConn,net.Conn")) {
        o.offset("itab_syscall_conn", address);
      }
    }
    return o;
  }

  static int member(JsonNode t, String struct, String member) {
    Integer off = memberOrNull(t, struct, member);
    if (off == null) {
      throw new AssertionError("gotruth found no member " + struct + "." + member);
    }
    return off;
  }

  static Integer memberOrNull(JsonNode t, String struct, String member) {
    for (JsonNode s : t.path("structs")) {
      if (s.path("name").asText().equals(struct)) {
        for (JsonNode m : s.path("members")) {
          if (m.path("name").asText().equals(member)) {
            return m.path("offset").asInt();
          }
        }
      }
    }
    return null;
  }

  static int size(JsonNode t, String struct) {
    for (JsonNode s : t.path("structs")) {
      if (s.path("name").asText().equals(struct) && s.path("found").asBoolean()) {
        return s.path("size").asInt();
      }
    }
    throw new AssertionError("gotruth found no struct " + struct);
  }
}
