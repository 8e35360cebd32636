package io.gospan.offsets.elf;

/**
 * One {@code .symtab} entry (ELF64_Sym).
 *
 * @param name symbol name, e.g. {@code google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader}
 * @param value {@code st_value}: the virtual address for functions and data
 * @param size {@code st_size} in bytes
 * @param type {@code ELF64_ST_TYPE(st_info)}: 1 OBJECT, 2 FUNC
 * @param sectionIndex {@code st_shndx}
 */
public record ElfSymbol(String name, long value, long size, int type, int sectionIndex) {
  public static final int STT_OBJECT = 1;
  public static final int STT_FUNC = 2;
}
