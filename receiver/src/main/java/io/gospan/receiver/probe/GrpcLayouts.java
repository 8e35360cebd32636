package io.gospan.receiver.probe;

import io.gospan.receiver.bpf.StructLayout;
import java.util.List;

/**
 * The layouts of {@code bpf/go_abi.h} and {@code bpf/grpc_events.h}, described once. A test
 * ({@code GrpcLayoutsBtfTest}) checks every field offset and size against the BTF of the
 * built {@code grpc.bpf.o}.
 */
public final class GrpcLayouts {
  private GrpcLayouts() {}

  /** {@code struct go_loc}: where one Go argument word lives at function entry. */
  public static final StructLayout GO_LOC =
      StructLayout.builder("go_loc").u8("kind").u8("dwarf_reg").bytes("_pad", 2).s32("sp_offset").build(8);

  /** {@code struct exe_key}: the traced executable's device and inode. */
  public static final StructLayout EXE_KEY = StructLayout.builder("exe_key").u64("dev").u64("ino").build(16);

  /** {@code struct http_server_offsets}: one HTTP/2 server copy of the ServeHTTP path. */
  public static final StructLayout HTTP_SERVER_OFFSETS =
      StructLayout.builder("http_server_offsets")
          .struct("process_headers_sc", GO_LOC)
          .struct("process_headers_f", GO_LOC)
          .struct("write_frame_w", GO_LOC)
          .struct("write_frame_ctx", GO_LOC)
          .struct("write_header_block_ctx", GO_LOC)
          .struct("write_field_e", GO_LOC)
          .struct("write_field_name_ptr", GO_LOC)
          .struct("write_field_name_len", GO_LOC)
          .struct("write_field_value_ptr", GO_LOC)
          .struct("write_field_value_len", GO_LOC)
          .s32("server_conn_conn")
          .s32("server_conn_hpack_encoder")
          .s32("write_res_headers_stream_id")
          .s32("write_res_headers_end_stream")
          .s32("meta_headers_frame_headers_frame")
          .s32("meta_headers_frame_fields")
          .s32("headers_frame_flags")
          .s32("headers_frame_stream_id")
          .s32("header_field_size")
          .s32("header_field_name")
          .s32("header_field_value")
          .s32("_pad")
          .build(128);

  /** {@code struct go_offsets}: per-binary offsets and argument locations. */
  public static final StructLayout GO_OFFSETS =
      StructLayout.builder("go_offsets")
          .struct("write_header_l", GO_LOC)
          .struct("write_header_stream_id", GO_LOC)
          .struct("write_header_end_stream", GO_LOC)
          .struct("write_header_hf_ptr", GO_LOC)
          .struct("write_header_hf_len", GO_LOC)
          .struct("client_operate_headers_t", GO_LOC)
          .struct("client_operate_headers_frame", GO_LOC)
          .struct("server_operate_headers_t", GO_LOC)
          .struct("server_operate_headers_frame", GO_LOC)
          .s32("loopy_writer_side")
          .s32("loopy_writer_conn")
          .s32("loopy_writer_framer")
          .s32("framer_writer")
          .s32("buf_writer_conn")
          .s32("http2_client_conn")
          .s32("http2_server_conn")
          .s32("meta_headers_frame_headers_frame")
          .s32("meta_headers_frame_fields")
          .s32("headers_frame_flags")
          .s32("headers_frame_stream_id")
          .s32("header_field_size")
          .s32("header_field_name")
          .s32("header_field_value")
          .s32("tcp_conn_fd")
          .s32("net_fd_sysfd")
          .s32("tls_conn_conn")
          .s32("syscall_conn_conn")
          .s32("h2c_buf_conn_conn")
          .bytes("_pad_itabs", 4)
          .u64("itab_tcp_conn")
          .u64("itab_tls_conn")
          .u64("itab_syscall_conn")
          .u64("itab_h2c_buf_conn")
          .struct("xnet", HTTP_SERVER_OFFSETS)
          .struct("nethttp", HTTP_SERVER_OFFSETS)
          .build(184 + 2 * 128);

  /**
   * {@code struct binary}: a slot of the {@code binaries} map, found by a uprobe's attach cookie
   * {@code (generation << 32) | (slot + 1)}.
   */
  public static final StructLayout BINARY =
      StructLayout.builder("binary")
          .struct("exe", EXE_KEY)
          .u64("generation")
          .u64("rodata_start")
          .u64("rodata_end")
          .bytes("name_cache", 8 * 32) // __u64[GOSPAN_NAME_CACHE_SLOTS]
          .struct("offsets", GO_OFFSETS)
          .build(40 + 8 * 32 + 440);

  /** Slots of the {@code binaries} map (its {@code max_entries}). */
  public static final int BINARY_SLOTS = 1024;

  /** Header fields per event ({@code GOSPAN_MAX_FIELDS}). */
  public static final int MAX_FIELDS = 10;

  /** Bytes kept of a header value ({@code GOSPAN_VALUE_LEN}). */
  public static final int VALUE_LEN = 124;

  /** Key size of {@code header_names}: the longest capturable name + NUL ({@code GOSPAN_NAME_LEN}). */
  public static final int NAME_LEN = 32;

  /** {@code struct header_field}: one captured header field. */
  public static final StructLayout HEADER_FIELD =
      StructLayout.builder("header_field")
          .u8("name_id")
          .u8("flags")
          .u16("value_len")
          .bytes("value", VALUE_LEN)
          .build(128);

  /** {@code struct header_event}: one ring buffer record. */
  public static final StructLayout HEADER_EVENT =
      StructLayout.builder("header_event")
          .u64("ts_ns")
          .u32("pid")
          .u32("tid")
          .u64("conn_id")
          .u32("stream_id")
          .u8("probe")
          .u8("side")
          .u8("flags")
          .u8("field_count")
          .s32("fd")
          .u16("family")
          .u16("local_port")
          .u16("remote_port")
          .u8("fields_total")
          .bytes("_pad0", 5)
          .bytes("local_addr", 16)
          .bytes("remote_addr", 16)
          .struct("exe", EXE_KEY)
          .array("fields", HEADER_FIELD, MAX_FIELDS)
          .build(96 + MAX_FIELDS * 128);

  /** Every layout of the contract, for the BTF check. */
  public static List<StructLayout> all() {
    return List.of(GO_LOC, EXE_KEY, HTTP_SERVER_OFFSETS, GO_OFFSETS, BINARY, HEADER_FIELD, HEADER_EVENT);
  }
}
