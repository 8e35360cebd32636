/**
 * A lazy DWARF 2–5 reader for Go binaries ({@link io.gospan.offsets.dwarf.DwarfData}): struct layouts, type
 * sizes and the location of each parameter at a function's entry (registers mapped to
 * {@link io.gospan.offsets.dwarf.X86Register}, stack offsets from SP, pieces). Source: the DWARF 5 standard,
 * Go's writer (src/cmd/internal/dwarf, src/cmd/compile/internal/ssa/debug.go) and reader (src/debug/dwarf),
 * go1.16–go1.26.
 */
package io.gospan.offsets.dwarf;
