/**
 * ELF64 little-endian x86-64 reading: the memory-mapped {@link io.gospan.offsets.elf.ElfFile} (header,
 * section and program headers, {@code .symtab} lookups, address to file offset mapping, SHF_COMPRESSED and
 * {@code .zdebug_*} inflation) and the bounds-checked {@link io.gospan.offsets.elf.ByteReader} every parser in
 * this module reads through. Source of the layouts: System V gABI, as read by Go src/debug/elf (go1.26).
 */
package io.gospan.offsets.elf;
