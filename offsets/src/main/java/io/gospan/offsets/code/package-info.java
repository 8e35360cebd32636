/**
 * Machine code of Go functions, decoded with a real x86-64 instruction decoder (Capstone, the native
 * {@code libcapstone}, through jnr-ffi; see {@link io.gospan.offsets.code.CapstoneDecoder}): where a
 * function's stack-check prologue ends (the place for an entry uprobe that fires once per call) and where its
 * {@code RET} instructions are (the places to observe a function's results without uretprobes, which Go's
 * moving goroutine stacks forbid).
 *
 * <p>Entry point: {@link io.gospan.offsets.code.FunctionCode#of(io.gospan.offsets.GoBinary,
 * io.gospan.offsets.GoFunction)}. Errors are {@link io.gospan.offsets.GoBinaryException}s:
 * {@link io.gospan.offsets.code.UndecodableCodeException} for bytes that are no instruction,
 * {@link io.gospan.offsets.code.DecoderUnavailableException} when the native decoder cannot be loaded.
 */
package io.gospan.offsets.code;
