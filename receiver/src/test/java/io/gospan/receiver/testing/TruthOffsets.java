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
  public static final String HANDLE_STREAM = "google.golang.org/grpc.(*Server).handleStream";

  static final String HTTP2 = "golang.org/x/net/http2.";
  static final List<String> STRUCTS =
      List.of(
          TRANSPORT + "loopyWriter",
          TRANSPORT + "framer",
          TRANSPORT + "bufWriter",
          TRANSPORT + "http2Client",
          TRANSPORT + "http2Server",
          TRANSPORT + "Stream",
          TRANSPORT + "ServerStream",
          TRANSPORT + "ClientStream",
          "runtime.g",
          "context.valueCtx",
          HTTP2 + "MetaHeadersFrame",
          HTTP2 + "HeadersFrame",
          HTTP2 + "FrameHeader",
          "golang.org/x/net/http2/hpack.HeaderField",
          "net.TCPConn",
          "net.conn",
          "net.netFD",
          "internal/poll.FD",
          "crypto/tls.Conn",
          "google.golang.org/grpc/internal/credentials.syscallConn",
          "golang.org/x/net/http2/h2c.bufConn",
          HTTP2 + "serverConn",
          HTTP2 + "writeResHeaders",
          "net/http.http2serverConn",
          "net/http.http2writeResHeaders",
          "net/http.http2MetaHeadersFrame",
          "net/http.http2HeadersFrame",
          "net/http.http2FrameHeader",
          "vendor/golang.org/x/net/http2/hpack.HeaderField");

  /** One HTTP/2 server copy of the ServeHTTP path: its C prefix, function and type names. */
  record ServerCopy(String prefix, String pkg, String typePrefix, String hpack) {
    String fn(String recv, String name) {
      return pkg + ".(*" + typePrefix + recv + ")." + name;
    }

    String type(String name) {
      return pkg + "." + typePrefix + name;
    }
  }

  static final List<ServerCopy> SERVERS = List.of(
      new ServerCopy("xnet", "golang.org/x/net/http2", "", "golang.org/x/net/http2/hpack"),
      new ServerCopy("nethttp", "net/http", "http2", "vendor/golang.org/x/net/http2/hpack"));

  /** gotruth's view of the functions and structs the probes need. */
  public static JsonNode truth(Path binary) {
    List<String> functions =
        new java.util.ArrayList<>(List.of(WRITE_HEADER, CLIENT_OPERATE_HEADERS, SERVER_OPERATE_HEADERS, HANDLE_STREAM));
    for (ServerCopy c : SERVERS) {
      functions.add(c.fn("serverConn", "processHeaders"));
      functions.add(c.fn("writeResHeaders", "writeFrame"));
      functions.add(c.fn("writeResHeaders", "writeHeaderBlock"));
      functions.add(c.hpack + ".(*Encoder).WriteField");
    }
    return GoTruth.query(binary, functions, STRUCTS);
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
            .offset("net_fd_sysfd", member(t, "net.netFD", "pfd") + member(t, "internal/poll.FD", "Sysfd"));
    for (ServerCopy c : SERVERS) {
      // what the binary has of this server copy: a client links hpack and the frame types only
      String p = c.prefix() + "_";
      String processHeaders = c.fn("serverConn", "processHeaders");
      String writeFrame = c.fn("writeResHeaders", "writeFrame");
      String writeHeaderBlock = c.fn("writeResHeaders", "writeHeaderBlock");
      String writeField = c.hpack() + ".(*Encoder).WriteField";
      if (hasParams(t, processHeaders)) {
        JsonNode ph = GoTruth.params(t, processHeaders);
        o.location(p + "process_headers_sc", GoTruth.location(ph, "sc", 0))
            .location(p + "process_headers_f", GoTruth.location(ph, "f", 0));
      }
      if (hasParams(t, writeFrame)) {
        JsonNode wf = GoTruth.params(t, writeFrame);
        o.location(p + "write_frame_w", GoTruth.location(wf, "w", 0))
            .location(p + "write_frame_ctx", GoTruth.location(wf, "ctx", 1));
      }
      if (hasParams(t, writeHeaderBlock)) {
        o.location(p + "write_header_block_ctx", GoTruth.location(GoTruth.params(t, writeHeaderBlock), "ctx", 1));
      }
      if (hasParams(t, writeField)) {
        JsonNode fld = GoTruth.params(t, writeField);
        o.location(p + "write_field_e", GoTruth.location(fld, "e", 0))
            .location(p + "write_field_name_ptr", GoTruth.location(fld, "f", 0))
            .location(p + "write_field_name_len", GoTruth.location(fld, "f", 1))
            .location(p + "write_field_value_ptr", GoTruth.location(fld, "f", 2))
            .location(p + "write_field_value_len", GoTruth.location(fld, "f", 3));
      }
      String hf = c.hpack() + ".HeaderField";
      String embHeaders = c.typePrefix() + "HeadersFrame";
      String embFrameHeader = c.typePrefix() + "FrameHeader";
      setIfPresent(o, p + "server_conn_conn", memberOrNull(t, c.type("serverConn"), "conn"));
      setIfPresent(o, p + "server_conn_hpack_encoder", memberOrNull(t, c.type("serverConn"), "hpackEncoder"));
      setIfPresent(o, p + "write_res_headers_stream_id", memberOrNull(t, c.type("writeResHeaders"), "streamID"));
      setIfPresent(o, p + "write_res_headers_end_stream", memberOrNull(t, c.type("writeResHeaders"), "endStream"));
      setIfPresent(o, p + "meta_headers_frame_headers_frame", memberOrNull(t, c.type("MetaHeadersFrame"), embHeaders));
      setIfPresent(o, p + "meta_headers_frame_fields", memberOrNull(t, c.type("MetaHeadersFrame"), "Fields"));
      Integer frameHeader = memberOrNull(t, c.type("HeadersFrame"), embFrameHeader);
      Integer flags = memberOrNull(t, c.type("FrameHeader"), "Flags");
      Integer streamId = memberOrNull(t, c.type("FrameHeader"), "StreamID");
      if (frameHeader != null && flags != null) {
        o.offset(p + "headers_frame_flags", frameHeader + flags);
      }
      if (frameHeader != null && streamId != null) {
        o.offset(p + "headers_frame_stream_id", frameHeader + streamId);
      }
      if (memberOrNull(t, hf, "Name") != null) {
        o.offset(p + "header_field_size", size(t, hf));
      }
      setIfPresent(o, p + "header_field_name", memberOrNull(t, hf, "Name"));
      setIfPresent(o, p + "header_field_value", memberOrNull(t, hf, "Value"));
    }
    // in-process propagation
    if (hasParams(t, HANDLE_STREAM)) {
      JsonNode hs = GoTruth.params(t, HANDLE_STREAM);
      o.location("handle_stream_t", GoTruth.location(hs, "t", 1)).location("handle_stream_stream", GoTruth.location(hs, "stream", 0));
    }
    setIfPresent(o, "stream_id", memberOrNull(t, TRANSPORT + "Stream", "id"));
    setIfPresent(o, "stream_ctx", memberOrNull(t, TRANSPORT + "Stream", "ctx"));
    setIfPresent(o, "stream_ct", memberOrNull(t, TRANSPORT + "Stream", "ct"));
    setIfPresent(o, "stream_ct_ptr", pointerOrNull(t, TRANSPORT + "Stream", "ct"));
    setIfPresent(o, "server_stream_stream", memberOrNull(t, TRANSPORT + "ServerStream", "Stream"));
    setIfPresent(o, "server_stream_stream_ptr", pointerOrNull(t, TRANSPORT + "ServerStream", "Stream"));
    setIfPresent(o, "client_stream_stream", memberOrNull(t, TRANSPORT + "ClientStream", "Stream"));
    setIfPresent(o, "client_stream_stream_ptr", pointerOrNull(t, TRANSPORT + "ClientStream", "Stream"));
    setIfPresent(o, "client_stream_ct", memberOrNull(t, TRANSPORT + "ClientStream", "ct"));
    setIfPresent(o, "g_goid", memberOrNull(t, "runtime.g", "goid"));
    setIfPresent(o, "g_parent_goid", memberOrNull(t, "runtime.g", "parentGoid"));
    setIfPresent(o, "value_ctx_val", memberOrNull(t, "context.valueCtx", "val"));
    Integer loopyConn = memberOrNull(t, TRANSPORT + "loopyWriter", "conn");
    if (loopyConn != null) {
      o.offset("loopy_writer_conn", loopyConn);
    }
    return o;
  }

  static void setIfPresent(GoOffsets o, String field, Integer value) {
    if (value != null) {
      o.offset(field, value);
    }
  }

  static boolean hasParams(JsonNode t, String function) {
    for (JsonNode p : t.path("params")) {
      if (p.path("func").asText().equals(function) && p.path("found").asBoolean()) {
        return true;
      }
    }
    return false;
  }

  static int member(JsonNode t, String struct, String member) {
    Integer off = memberOrNull(t, struct, member);
    if (off == null) {
      throw new AssertionError("gotruth found no member " + struct + "." + member);
    }
    return off;
  }

  /** 1 when the member's type (its DW_AT_name) is a pointer, 0 when not, null when there is no such member. */
  static Integer pointerOrNull(JsonNode t, String struct, String member) {
    for (JsonNode s : t.path("structs")) {
      if (s.path("name").asText().equals(struct)) {
        for (JsonNode m : s.path("members")) {
          if (m.path("name").asText().equals(member)) {
            return m.path("type").asText().startsWith("*") ? 1 : 0;
          }
        }
      }
    }
    return null;
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
