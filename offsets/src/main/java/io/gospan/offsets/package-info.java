/**
 * Go binary inspection for gospan's probes: {@link io.gospan.offsets.GoBinary} opens an x86-64 Linux Go
 * executable and answers, without running it, what the uprobes need — Go and module versions (to pick
 * offsets from the catalog), function entry addresses and file offsets, itab addresses for the
 * {@code net.Conn} implementations, struct member offsets and parameter locations from DWARF. Pure Java.
 *
 * <p>Errors are typed: {@link io.gospan.offsets.GoBinaryException} and its subclasses
 * ({@link io.gospan.offsets.NotElfException}, {@link io.gospan.offsets.UnsupportedArchitectureException},
 * {@link io.gospan.offsets.NotGoBinaryException}, {@link io.gospan.offsets.CorruptBinaryException},
 * {@link io.gospan.offsets.DwarfUnavailableException},
 * {@link io.gospan.offsets.UnsupportedDwarfFormException}).
 *
 * <p>Subpackages hold the format readers: {@code elf} (ELF64 tables, sections, symbols, decompression),
 * {@code buildinfo} ({@code .go.buildinfo}), {@code pclntab} ({@code .gopclntab}, moduledata, runtime type
 * names) and {@code dwarf} (lazy DWARF 4/5 reader).
 */
package io.gospan.offsets;
