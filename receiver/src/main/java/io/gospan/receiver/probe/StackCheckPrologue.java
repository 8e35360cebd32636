package io.gospan.receiver.probe;

import io.gospan.offsets.code.CapstoneDecoder;
import io.gospan.offsets.code.DecoderUnavailableException;
import io.gospan.offsets.code.FunctionCode;
import io.gospan.receiver.bpf.BpfException;

/**
 * Where to put an entry uprobe on a Go function so it fires once per call: after the
 * stack-check prologue.
 *
 * <p>A Go function whose frame may not fit starts by comparing SP (or SP minus its frame) with
 * the goroutine's stack guard and jumps to a tail that calls {@code runtime.morestack}, which
 * grows (moves) the stack and then <em>re-runs the function from its entry</em>. A probe at the
 * entry would fire twice for that call. Right after the conditional jump, SP is still the
 * entry SP (the frame is set up after it) and the argument registers are untouched, so the
 * argument locations valid at entry are valid there too.
 *
 * <p>The bytes are decoded with a real x86-64 decoder and the forms recognized are those of
 * {@link FunctionCode} (Go src/cmd/internal/obj/x86/obj6.go, stacksplit, amd64): an optional
 * TLS load of g (Go &lt;= 1.16), an optional {@code lea} of SP minus the frame, the
 * {@code cmp} with {@code g.stackguard0} and the {@code jbe}. Anything else (NOSPLIT functions
 * have no prologue; huge frames use another sequence) gives 0: the probe stays at the entry.
 */
public final class StackCheckPrologue {
  private StackCheckPrologue() {}

  /**
   * Length in bytes of the stack-check prologue at the start of {@code code} (a function's
   * first bytes; 32 cover every form), 0 when none is recognized.
   *
   * @throws BpfException when the native x86-64 decoder (libcapstone) cannot be loaded
   */
  public static int length(byte[] code) {
    try {
      return FunctionCode.prologueLength(code, CapstoneDecoder.get());
    } catch (DecoderUnavailableException e) {
      throw new BpfException("cannot place probes after the stack-check prologue: " + e.getMessage(), 0);
    }
  }
}
