package io.gospan.receiver.probe;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.resolve.ConnTypes;
import io.gospan.offsets.elf.ElfFile;
import io.gospan.receiver.probe.GrpcStructs.Binary;
import io.gospan.receiver.probe.GrpcStructs.ConnType;
import io.gospan.receiver.probe.GrpcStructs.GoOffsets;
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
      Binary.rodataStart(slot, 0, r[0]);
      Binary.rodataEnd(slot, 0, r[1]);
    });
    Binary.textStart(slot, 0, textStart);
    Binary.pie(slot, 0, pie ? 1 : 0);
    Binary.newStreamResult(slot, 0, newStreamResultSlot + 1);
    // netFD.pfd.Sysfd: the catalog's or DWARF's value (written with the offsets); else the runtime type
    // information's (a Go release newer than the catalog, stripped)
    if (GoOffsets.netFdSysfd(slot, Binary.OFFSETS) < 0 && connTypes.netFdSysfd() >= 0) {
      GoOffsets.netFdSysfd(slot, Binary.OFFSETS, (int) connTypes.netFdSysfd());
    }
    int count = 0;
    for (ConnTypes.Entry e : connTypes.entries()) {
      int at = Binary.CONN_TYPES + count * ConnType.SIZE;
      ConnType.itab(slot, at, e.itab());
      ConnType.offset(slot, at, Math.toIntExact(e.offset()));
      ConnType.kind(slot, at, e.kind().value());
      ConnType.next(slot, at, Math.max(0, e.next()));
      count++;
    }
    Binary.connTypeCount(slot, 0, count);
  }
}
