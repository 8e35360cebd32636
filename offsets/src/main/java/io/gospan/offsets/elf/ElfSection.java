package io.gospan.offsets.elf;

/**
 * One ELF64 section header (System V ABI, "Sections"; Go's debug/elf.SectionHeader).
 *
 * @param name section name from {@code .shstrtab}
 * @param type {@code sh_type} (1 PROGBITS, 2 SYMTAB, 8 NOBITS, ...)
 * @param flags {@code sh_flags}; {@link #SHF_COMPRESSED} marks a compressed section
 * @param addr virtual address when loaded, 0 for non-alloc sections
 * @param offset byte offset of the contents in the file
 * @param size byte size of the contents in the file (compressed size when compressed)
 * @param link {@code sh_link}
 * @param entsize {@code sh_entsize}
 */
public record ElfSection(
    String name, int type, long flags, long addr, long offset, long size, int link, long entsize) {
  public static final int SHT_SYMTAB = 2;
  public static final int SHT_NOBITS = 8;
  public static final long SHF_COMPRESSED = 0x800;

  public boolean isCompressed() {
    return (flags & SHF_COMPRESSED) != 0;
  }

  /** True when {@code address} lies inside this section's virtual address range. */
  public boolean containsAddress(long address) {
    return addr != 0 && Long.compareUnsigned(address, addr) >= 0
        && Long.compareUnsigned(address - addr, size) < 0;
  }
}
