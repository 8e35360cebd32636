package io.gospan.offsets;

/**
 * Where a Go function is in the binary.
 *
 * @param name Go symbol name, e.g. {@code google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader}
 * @param entry virtual address of the first instruction
 * @param fileOffset byte offset of the first instruction in the file (what a uprobe attaches to):
 *     {@code entry - p_vaddr + p_offset} of the PT_LOAD segment holding it
 * @param source which table gave the entry
 */
public record GoFunction(String name, long entry, long fileOffset, Source source) {
  /** The table an entry address came from. */
  public enum Source {
    /** The ELF {@code .symtab} (absent after {@code -ldflags=-s}). */
    SYMTAB,
    /** Go's {@code .gopclntab}, kept in stripped binaries. */
    PCLNTAB
  }
}
