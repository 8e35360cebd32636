package io.gospan.receiver.probe;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.resolve.ConnTypes;
import io.gospan.offsets.elf.ElfFile;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.Optional;

/**
 * What a binary's slot in {@code binaries} holds besides its {@link GoOffsets} ({@code struct binary}):
 * where its read-only data is, whether it is position-independent and where its code starts (the BPF
 * programs subtract a PIE's load bias, {@code mm->start_code} minus {@link #textStart()}, from every itab
 * and read-only data address), and its connection types ({@link ConnTypes}: how a {@code net.Conn} of each
 * type leads to its socket).
 *
 * @param readOnlyData {@code [start, end)} link-time addresses of the read-only PT_LOAD segment
 *     ({@link ElfFile#readOnlyData()}); empty when unknown: header names are then read every time
 * @param pie whether the binary is position-independent ({@code ET_DYN})
 * @param textStart the link-time address of its executable PT_LOAD ({@link ElfFile#executableStart()})
 * @param connTypes at most {@link GrpcLayouts#CONN_TYPES} entries; none: no socket is identified
 * @param newStreamResultSlot where grpc-go's {@code (*http2Client).NewStream} probes read the new stream:
 *     -1, RAX (they sit on its RETs); else the byte offset from RSP of the stack slot holding it (they sit on
 *     emulated jumps before the RETs: {@link io.gospan.offsets.code.ResultPlaces})
 */
public record BinaryLayout(Optional<long[]> readOnlyData, boolean pie, long textStart, ConnTypes connTypes,
    int newStreamResultSlot) {

  /** Nothing known: no name cache, no socket identity. */
  public static final BinaryLayout NONE =
      new BinaryLayout(Optional.empty(), false, 0, ConnTypes.unavailable("not read"));

  /** Without a stack slot for NewStream's result: its probes read RAX at its RETs. */
  public BinaryLayout(Optional<long[]> readOnlyData, boolean pie, long textStart, ConnTypes connTypes) {
    this(readOnlyData, pie, textStart, connTypes, -1);
  }

  /** This layout with NewStream's result read from {@code [rsp + slot]} ({@code -1}: RAX). */
  public BinaryLayout withNewStreamResultSlot(int slot) {
    return new BinaryLayout(readOnlyData, pie, textStart, connTypes, slot);
  }

  public BinaryLayout {
    if (newStreamResultSlot < -1 || newStreamResultSlot >= 0xffff) {
      throw new IllegalArgumentException("NewStream's result slot " + newStreamResultSlot + " is not in [-1, 65534]");
    }
    Objects.requireNonNull(readOnlyData, "readOnlyData");
    Objects.requireNonNull(connTypes, "connTypes");
    if (connTypes.entries().size() > GrpcLayouts.CONN_TYPES) {
      throw new IllegalArgumentException(connTypes.entries().size() + " connection types, struct binary holds "
          + GrpcLayouts.CONN_TYPES);
    }
  }

  /**
   * Reads a binary's layout: its segments and its connection types (runtime type information).
   *
   * @throws GoBinaryException the runtime type information points outside the file
   */
  public static BinaryLayout of(GoBinary binary) throws GoBinaryException {
    ElfFile elf = binary.elf();
    boolean pie = elf.positionIndependent();
    ConnTypes conns = ConnTypes.of(binary, GrpcLayouts.CONN_TYPES);
    if (pie && elf.executableStart().isEmpty()) {
      conns = ConnTypes.unavailable("a PIE without an executable segment: its load bias cannot be found");
    }
    return new BinaryLayout(elf.readOnlyData(), pie, pie ? elf.executableStart().orElse(0) : 0, conns);
  }

  /**
   * Writes the members of {@code struct binary} this describes into {@code slot} (a {@link
   * GrpcLayouts#BINARY} whose {@code offsets} are written already).
   */
  void writeTo(ByteBuffer slot) {
    readOnlyData.ifPresent(r -> {
      slot.putLong(GrpcLayouts.BINARY.offset("rodata_start"), r[0]);
      slot.putLong(GrpcLayouts.BINARY.offset("rodata_end"), r[1]);
    });
    slot.putLong(GrpcLayouts.BINARY.offset("text_start"), textStart);
    slot.put(GrpcLayouts.BINARY.offset("pie"), (byte) (pie ? 1 : 0));
    slot.putShort(GrpcLayouts.BINARY.offset("new_stream_result"), (short) (newStreamResultSlot + 1));
    // netFD.pfd.Sysfd: the catalog's or DWARF's value (written with the offsets); else the runtime type
    // information's (a Go release newer than the catalog, stripped)
    int sysfd = GrpcLayouts.BINARY.offset("offsets") + GrpcLayouts.GO_OFFSETS.offset("net_fd_sysfd");
    if (slot.getInt(sysfd) < 0 && connTypes.netFdSysfd() >= 0) {
      slot.putInt(sysfd, (int) connTypes.netFdSysfd());
    }
    int base = GrpcLayouts.BINARY.offset("conn_types");
    int size = GrpcLayouts.CONN_TYPE.size();
    int count = 0;
    for (ConnTypes.Entry e : connTypes.entries()) {
      int at = base + count * size;
      slot.putLong(at + GrpcLayouts.CONN_TYPE.offset("itab"), e.itab());
      slot.putInt(at + GrpcLayouts.CONN_TYPE.offset("offset"), Math.toIntExact(e.offset()));
      slot.put(at + GrpcLayouts.CONN_TYPE.offset("kind"), (byte) e.kind().value());
      slot.put(at + GrpcLayouts.CONN_TYPE.offset("next"), (byte) Math.max(0, e.next()));
      count++;
    }
    slot.put(GrpcLayouts.BINARY.offset("conn_type_count"), (byte) count);
  }
}
