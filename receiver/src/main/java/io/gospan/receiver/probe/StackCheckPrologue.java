package io.gospan.receiver.probe;

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
 * <p>Recognized (Go src/cmd/internal/obj/x86/obj6.go, stacksplit, amd64):
 * <pre>
 *   [mov %fs:-8,%rcx]                 Go &lt;= 1.16: load g (TLS)
 *   [lea -N(%rsp),%r12 | %rax]        frames larger than StackSmall
 *   cmp 0x10(%r14 | %rcx),%rsp|%r12|%rax   g.stackguard0
 *   jbe rel8 | rel32                  to the morestack tail
 * </pre>
 * Anything else (NOSPLIT functions have no prologue; huge frames use another sequence) gives
 * 0: the probe stays at the entry.
 */
public final class StackCheckPrologue {
  private StackCheckPrologue() {}

  /**
   * Length in bytes of the stack-check prologue at the start of {@code code}, 0 when none is
   * recognized.
   */
  public static int length(byte[] code) {
    int i = 0;
    // mov %fs:0xfffffffffffffff8,%rcx
    if (matches(code, i, 0x64, 0x48, 0x8b, 0x0c, 0x25, 0xf8, 0xff, 0xff, 0xff)) {
      i += 9;
    }
    // lea disp8/disp32(%rsp),%r12 (4c 8d 64|a4 24) or %rax (48 8d 44|84 24)
    if (i + 5 <= code.length && (u(code, i) == 0x4c || u(code, i) == 0x48) && u(code, i + 1) == 0x8d
        && u(code, i + 3) == 0x24) {
      int modrm = u(code, i + 2);
      if (modrm == 0x64 || modrm == 0x44) {
        i += 5; // disp8
      } else if (modrm == 0xa4 || modrm == 0x84) {
        i += 8; // disp32
      } else {
        return 0;
      }
    }
    // cmp 0x10(%r14),%rsp (49 3b 66 10) | %r12 (4d 3b 66 10); cmp 0x10(%rcx),%rsp (48 3b 61 10) | %rax (48 3b 41 10)
    if (matches(code, i, 0x49, 0x3b, 0x66, 0x10) || matches(code, i, 0x4d, 0x3b, 0x66, 0x10)
        || matches(code, i, 0x48, 0x3b, 0x61, 0x10) || matches(code, i, 0x48, 0x3b, 0x41, 0x10)) {
      i += 4;
    } else {
      return 0;
    }
    // jbe rel32 (0f 86) | rel8 (76)
    if (matches(code, i, 0x0f, 0x86) && i + 6 <= code.length) {
      return i + 6;
    }
    if (matches(code, i, 0x76) && i + 2 <= code.length) {
      return i + 2;
    }
    return 0;
  }

  private static boolean matches(byte[] code, int at, int... bytes) {
    if (at + bytes.length > code.length) {
      return false;
    }
    for (int k = 0; k < bytes.length; k++) {
      if (u(code, at + k) != bytes[k]) {
        return false;
      }
    }
    return true;
  }

  private static int u(byte[] code, int i) {
    return code[i] & 0xff;
  }
}
