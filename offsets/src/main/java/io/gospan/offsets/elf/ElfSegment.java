package io.gospan.offsets.elf;

/**
 * One ELF64 program header (System V ABI, "Program Header"; Go's debug/elf.ProgHeader).
 *
 * @param type {@code p_type}; {@link #PT_LOAD} = 1
 * @param flags {@code p_flags} (PF_X 1, PF_W 2, PF_R 4)
 * @param offset file offset of the segment
 * @param vaddr virtual address of the segment
 * @param filesz bytes present in the file
 * @param memsz bytes in memory (≥ filesz; the rest is zero-filled)
 */
public record ElfSegment(int type, int flags, long offset, long vaddr, long filesz, long memsz) {
  public static final int PT_LOAD = 1;

  /** True when {@code address} lies in the file-backed part of this segment. */
  public boolean containsFileAddress(long address) {
    return Long.compareUnsigned(address, vaddr) >= 0
        && Long.compareUnsigned(address - vaddr, filesz) < 0;
  }
}
