package io.gospan.offsets.code;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which register holds which word of a Go function's arguments at its entry, as the function's own machine
 * code says: before it grows its stack, a register-ABI function saves every register argument to its spill
 * slot, calls {@code runtime.morestack_noctxt}, reloads them and starts again from its entry (Go
 * src/cmd/internal/obj/x86/obj6.go, {@code stacksplit}: "spill register args"; the slots are the argument
 * area's, Go src/cmd/compile/abi-internal.md, "Stack layout"). The tail the stack-check prologue jumps to
 * reads, in Intel syntax as the decoder prints it:
 *
 * <pre>
 *   mov qword ptr [rsp + 8], rax          one per argument register, its word's size:
 *   mov dword ptr [rsp + 0x10], ebx       byte, word, dword, qword; movss / movsd for X0-X14
 *   mov byte ptr [rsp + 0x14], cl
 *   ...
 *   call runtime.morestack_noctxt         (any call: the binary may have no symbols)
 *   mov rax, qword ptr [rsp + 8]          the reloads
 *   ...
 *   jmp entry
 * </pre>
 *
 * RSP there is the entry's (the frame is not set up yet), so {@code [rsp + 8 + n]} is byte {@code n} of the
 * argument area. Only the compiler's ABI decides this code; it holds the same facts as DWARF's locations at
 * the entry, stripped or not. A function without a stack-check prologue (NOSPLIT, tiny frames) has no such
 * tail: {@link #reason()} says so.
 *
 * @param spills the register words, in the order the code saves them (ascending offsets in every Go
 *     toolchain seen); empty when the function takes no register argument or none was found
 * @param reason why no spill tail was found (one line), else null
 */
public record ArgumentSpills(List<Spill> spills, String reason) {
  /**
   * One argument word saved to the stack.
   *
   * @param register the 64-bit register ({@code rax}, {@code r9}) or the vector register ({@code xmm0})
   * @param offset bytes from the start of the argument area ({@code SP + 8} at the entry)
   * @param size bytes saved: 1, 2, 4 or 8
   */
  public record Spill(String register, int offset, int size) {
    /** {@code rax@0:8}: register, offset, size. */
    @Override
    public String toString() {
      return register + "@" + offset + ":" + size;
    }
  }

  /** Instructions decoded after the {@code call} to find the jump back to the entry. */
  private static final int RELOAD_INSTRUCTIONS = 64;
  /** Instructions decoded before the {@code call}: 9 integer and 15 vector registers, padding. */
  private static final int SPILL_INSTRUCTIONS = 40;

  private static final Pattern SPILL = Pattern.compile(
      "(byte|word|dword|qword) ptr \\[rsp(?: \\+ (0x[0-9a-f]+|[0-9]+))?\\], (\\w+)");

  public ArgumentSpills {
    spills = List.copyOf(spills);
  }

  /** Whether the spill tail was found. */
  public boolean found() {
    return reason == null;
  }

  /** The spills as {@code rax@0:8 rbx@8:4 ...}. */
  public String describe() {
    return String.join(" ", spills.stream().map(Spill::toString).toList());
  }

  /**
   * Reads the spill tail of one function of {@code bin} (decoded with Capstone).
   *
   * @throws UndecodableCodeException the function's bytes are no instructions, or its range is implausible
   * @throws DecoderUnavailableException libcapstone cannot be loaded
   * @throws io.gospan.offsets.CorruptBinaryException the function's bytes are not in the file
   */
  public static ArgumentSpills of(GoBinary bin, GoFunction f) throws GoBinaryException {
    FunctionCode.CodeRange range = FunctionCode.ranges(bin, List.of(f)).get(f.name());
    long size = range.end() - f.entry();
    if (size <= 0 || size > FunctionCode.MAX_FUNCTION_BYTES) {
      throw new UndecodableCodeException(bin.path() + ": " + f.name() + " at 0x" + Long.toHexString(f.entry())
          + ": implausible size " + size, f.entry());
    }
    byte[] code = new byte[(int) size];
    bin.elf().readAddress(f.entry(), size).get(code);
    return analyze(f.name(), f.entry(), code, CapstoneDecoder.get());
  }

  /** As {@link #of}, on the whole function's bytes {@code code}, whose first byte is at {@code entry}. */
  public static ArgumentSpills analyze(String name, long entry, byte[] code, X86Decoder decoder) {
    long target = FunctionCode.stackCheckTarget(code, entry, decoder);
    if (target < 0) {
      return none(name + " has no stack-check prologue, so no spill of its register arguments");
    }
    int from = (int) (target - entry);
    if (from <= 0 || from >= code.length) {
      return none(name + ": the stack check jumps outside the function");
    }
    byte[] tail = java.util.Arrays.copyOfRange(code, from, code.length);
    List<Instruction> ins = decoder.decode(tail, target, SPILL_INSTRUCTIONS + RELOAD_INSTRUCTIONS).instructions();
    List<Spill> spills = new ArrayList<>();
    int i = 0;
    for (; i < ins.size(); i++) {
      Instruction x = ins.get(i);
      String m = x.mnemonic();
      if (m.equals("call")) {
        break;
      }
      if (m.startsWith("nop")) {
        continue;
      }
      Matcher s = SPILL.matcher(x.operands());
      boolean vector = m.equals("movsd") || m.equals("movss");
      if (!(m.equals("mov") || vector) || !s.matches() || i >= SPILL_INSTRUCTIONS) {
        return none(name + ": the stack-growth tail at 0x" + Long.toHexString(target) + " does not save registers ("
            + x + ")");
      }
      int bytes = switch (s.group(1)) {
        case "byte" -> 1;
        case "word" -> 2;
        case "dword" -> 4;
        default -> 8;
      };
      String reg = vector ? s.group(3) : FunctionCode.family(s.group(3));
      if (vector != reg.startsWith("xmm")) {
        return none(name + ": unexpected spill " + x);
      }
      long disp = s.group(2) == null ? 0 : Long.decode(s.group(2));
      if (disp < 8) {
        return none(name + ": " + x + " writes below the argument area");
      }
      for (Spill earlier : spills) {
        if (earlier.register().equals(reg)) {
          return none(name + ": " + reg + " saved twice in the stack-growth tail");
        }
      }
      spills.add(new Spill(reg, (int) (disp - 8), bytes));
    }
    if (i >= ins.size()) {
      return none(name + ": no call in the stack-growth tail at 0x" + Long.toHexString(target));
    }
    for (int k = i + 1; k < ins.size(); k++) {
      Instruction x = ins.get(k);
      if (x.mnemonic().equals("jmp")) {
        if (x.operands().equals("0x" + Long.toHexString(entry))) {
          return new ArgumentSpills(spills, null);
        }
        break;
      }
      if (x.mnemonic().equals("call") || x.isReturn()) {
        break;
      }
    }
    return none(name + ": the stack-growth tail at 0x" + Long.toHexString(target) + " does not jump back to the entry");
  }

  private static ArgumentSpills none(String why) {
    return new ArgumentSpills(List.of(), why);
  }
}
