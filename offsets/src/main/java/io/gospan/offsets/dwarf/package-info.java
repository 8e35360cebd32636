/**
 * A lazy DWARF 2–5 reader for Go binaries ({@link io.gospan.offsets.dwarf.DwarfData}): struct layouts, type
 * sizes and the location of each parameter at a function's entry (registers mapped to
 * {@link io.gospan.offsets.dwarf.X86Register}, stack offsets from SP, pieces). Source: the DWARF 5 standard,
 * Go's writer (src/cmd/internal/dwarf, src/cmd/compile/internal/ssa/debug.go) and reader (src/debug/dwarf),
 * go1.16–go1.26.
 *
 * <p>{@link io.gospan.offsets.dwarf.DwarfData} is the public entry; its parts, one job each: {@code DebugInfo}
 * (unit headers, DIEs), {@code Abbreviations}, {@code FormTable} (how each DW_FORM is read or skipped),
 * {@code NameDirectory} (name → DIE), {@code TypeReader} (sizes, struct members), {@code RangeLists},
 * {@code LocationLists}, {@code LocationExpressions}, {@link io.gospan.offsets.dwarf.GoRegisterAbi}.
 */
package io.gospan.offsets.dwarf;
