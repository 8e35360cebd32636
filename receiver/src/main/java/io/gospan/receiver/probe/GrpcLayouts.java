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

  /** {@code struct go_offsets}: per-binary offsets and argument locations. */
  public static final StructLayout GO_OFFSETS =
      StructLayout.builder("go_offsets")
          .struct("write_header_l", GO_LOC)
          .struct("write_header_stream_id", GO_LOC)
          .struct("write_header_end_stream", GO_LOC)
          .struct("write_header_hf_ptr", GO_LOC)
          .struct("write_header_hf_len", GO_LOC)
          .s32("loopy_writer_side")
          .u32("_pad0")
          .build(48);

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
          .u32("_pad0")
          .build(40);

  /** Every layout of the contract, for the BTF check. */
  public static List<StructLayout> all() {
    return List.of(GO_LOC, EXE_KEY, GO_OFFSETS, HEADER_EVENT);
  }
}
