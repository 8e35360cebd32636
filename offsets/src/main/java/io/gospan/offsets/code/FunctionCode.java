package io.gospan.offsets.code;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.elf.ElfSymbol;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Go function's machine code, decoded from its entry to its end: where its stack-check prologue ends and
 * where its {@code RET} instructions are. All addresses are virtual addresses; the file offset of an address
 * {@code a} in the function is {@code function.fileOffset() + (a - function.entry())} (a function lies in
 * one PT_LOAD segment).
 *
 * <p><b>Stack-check prologue</b> (Go src/cmd/internal/obj/x86/obj6.go, {@code stacksplit}, amd64). A Go
 * function whose frame may not fit starts by comparing SP (or SP minus its frame) with the goroutine's
 * {@code g.stackguard0} and jumps to a tail that calls {@code runtime.morestack}, which moves the stack and
 * re-runs the function from its entry: an entry probe would fire twice for that call. Right after the
 * conditional jump SP is still the entry SP and the argument registers are untouched. Recognized, in Intel
 * syntax as the decoder prints it:
 *
 * <pre>
 *   [mov rcx, qword ptr fs:[0xfffffffffffffff8]]   g from TLS (Go &lt;= 1.16, and ABI0 assembly)
 *   [lea r12|rax, [rsp - N]]                        frames larger than StackSmall
 *   cmp rsp|r12|rax, qword ptr [r14|rcx + 0x10]     g.stackguard0: R14 holds g in ABIInternal (Go >= 1.17),
 *                                                   RCX after the TLS load; the register is the lea's, else RSP
 *   jbe target                                      to the morestack tail, inside the function
 * </pre>
 *
 * Anything else (NOSPLIT functions have no prologue; huge frames use another sequence) means no prologue:
 * {@link #prologueEnd()} is the entry.
 *
 * <p><b>Returns</b>: every instruction the decoder calls {@code ret}, decoding linearly from the entry (Go
 * emits no data inside functions on amd64) to the end: the {@code .symtab} size when present, else the next
 * {@code .gopclntab} entry less the trailing {@code int3} instructions (0xCC, what the amd64 linker pads
 * functions with: cmd/link/internal/amd64/obj.go, CodePad; a function that itself ends in {@code int3} then
 * looks shorter). A Go function can have several returns, or none (it ends in a
 * tail jump or a call to a function that does not return).
 *
 * <p>Bounded work: a function larger than {@link #MAX_FUNCTION_BYTES} is refused; decoding is linear in its
 * size.
 *
 * @param name Go symbol name
 * @param entry address of the first instruction
 * @param end address just after the last instruction (padding excluded)
 * @param prologueEnd address just after the stack-check prologue's conditional jump, or {@code entry} when
 *     no prologue is recognized
 * @param returns addresses of the {@code ret} instructions, ascending
 * @param instructions number of instructions decoded
 */
public record FunctionCode(String name, long entry, long end, long prologueEnd, List<Long> returns,
    int instructions) {
  /**
   * Largest function decoded: 1 MiB (the largest in a grpc-go server built with Go 1.26 is 21 KiB, an
   * assembly chacha20poly1305 routine).
   */
  public static final int MAX_FUNCTION_BYTES = 1 << 20;
  /** Instructions a prologue has at most, and so the most {@link #prologueLength} decodes. */
  private static final int PROLOGUE_INSTRUCTIONS = 4;

  public FunctionCode {
    returns = List.copyOf(returns);
  }

  /** Whether a stack-check prologue was recognized. */
  public boolean hasStackCheck() {
    return prologueEnd != entry;
  }

  /** Length in bytes of the stack-check prologue, 0 when none. */
  public int prologueLength() {
    return (int) (prologueEnd - entry);
  }

  /**
   * Where a function's code ends.
   *
   * @param function the function
   * @param end from {@code .symtab}'s size (exact), else the next {@code .gopclntab} entry (padding included)
   * @param padded whether {@code end} includes the linker's INT3 padding
   */
  public record CodeRange(GoFunction function, long end, boolean padded) {}

  /**
   * Decodes one function with the Capstone decoder. See {@link #of(GoBinary, Collection, X86Decoder)}.
   *
   * @throws UndecodableCodeException bytes in the function are no instruction, or its range is implausible
   * @throws DecoderUnavailableException libcapstone cannot be loaded
   * @throws CorruptBinaryException the function's bytes are not in the file
   */
  public static FunctionCode of(GoBinary bin, GoFunction function) throws GoBinaryException {
    return of(bin, List.of(function), CapstoneDecoder.get()).get(function.name());
  }

  /**
   * Decodes several functions of {@code bin} (one pass over {@code .symtab} for their sizes).
   *
   * @param functions from {@link GoBinary#functions} or {@link GoBinary#functionsFromPclntab}
   * @return by function name, in the order given
   * @throws UndecodableCodeException bytes in a function are no instruction, or its range is implausible
   *     (no end found, larger than {@link #MAX_FUNCTION_BYTES})
   * @throws CorruptBinaryException a function's bytes are not in the file
   */
  public static Map<String, FunctionCode> of(GoBinary bin, Collection<GoFunction> functions, X86Decoder decoder)
      throws GoBinaryException {
    Map<String, FunctionCode> out = new LinkedHashMap<>();
    for (CodeRange r : ranges(bin, functions).values()) {
      out.put(r.function().name(), of(bin, r, decoder));
    }
    return out;
  }

  /**
   * The code ranges of several functions (one pass over {@code .symtab}).
   *
   * @return by function name, in the order given
   * @throws UndecodableCodeException a function has no end (no {@code .symtab} size, no later
   *     {@code .gopclntab} entry)
   */
  public static Map<String, CodeRange> ranges(GoBinary bin, Collection<GoFunction> functions)
      throws GoBinaryException {
    Map<String, ElfSymbol> syms = bin.elf().hasSymbols()
        ? bin.elf().symbols(functions.stream().map(GoFunction::name).toList())
        : Map.of();
    Map<String, CodeRange> out = new LinkedHashMap<>();
    for (GoFunction f : functions) {
      ElfSymbol s = syms.get(f.name());
      if (s != null && s.type() == ElfSymbol.STT_FUNC && s.value() == f.entry() && s.size() > 0) {
        out.put(f.name(), new CodeRange(f, f.entry() + s.size(), false));
        continue;
      }
      OptionalLong next = bin.nextFunctionEntry(f.entry());
      if (next.isEmpty()) {
        throw new UndecodableCodeException(bin.path() + ": " + f.name() + " at 0x" + Long.toHexString(f.entry())
            + ": no function end (no .symtab size, no later .gopclntab entry)", f.entry());
      }
      out.put(f.name(), new CodeRange(f, next.getAsLong(), true));
    }
    return out;
  }

  /**
   * Decodes one function's range. A padded range is decoded to its end and the trailing {@code int3}
   * instructions are not counted as the function's.
   *
   * @throws UndecodableCodeException bytes in the function are no instruction, or the range is larger than
   *     {@link #MAX_FUNCTION_BYTES}
   * @throws CorruptBinaryException the bytes are not in the file
   */
  public static FunctionCode of(GoBinary bin, CodeRange range, X86Decoder decoder) throws GoBinaryException {
    GoFunction f = range.function();
    long size = range.end() - f.entry();
    if (size <= 0 || size > MAX_FUNCTION_BYTES) {
      throw new UndecodableCodeException(bin.path() + ": " + f.name() + " at 0x" + Long.toHexString(f.entry())
          + ": implausible size " + size + " (limit " + MAX_FUNCTION_BYTES + ")", f.entry());
    }
    ByteBuffer buf = bin.elf().readAddress(f.entry(), size);
    byte[] code = new byte[(int) size];
    buf.get(code);
    try {
      return analyze(f.name(), f.entry(), code, decoder, range.padded());
    } catch (UndecodableCodeException e) {
      throw new UndecodableCodeException(bin.path() + ": " + e.getMessage(), e.address());
    }
  }

  /**
   * Decodes {@code code}, the whole function {@code name} whose first byte is at {@code entry}.
   *
   * @throws UndecodableCodeException some bytes are no instruction (the message gives the address)
   */
  public static FunctionCode analyze(String name, long entry, byte[] code, X86Decoder decoder)
      throws UndecodableCodeException {
    return analyze(name, entry, code, decoder, false);
  }

  private static FunctionCode analyze(String name, long entry, byte[] code, X86Decoder decoder, boolean padded)
      throws UndecodableCodeException {
    if (code.length == 0 || code.length > MAX_FUNCTION_BYTES) {
      throw new UndecodableCodeException(name + " at 0x" + Long.toHexString(entry) + ": implausible size "
          + code.length, entry);
    }
    List<Instruction> first = new ArrayList<>(PROLOGUE_INSTRUCTIONS);
    List<Long> rets = new ArrayList<>();
    // count and end of the instructions up to the last one that is not int3 padding
    long[] kept = {0, entry};
    long[] all = {0};
    int decoded = decoder.decode(code, entry, code.length, i -> {
      if (first.size() < PROLOGUE_INSTRUCTIONS) {
        first.add(i);
      }
      if (i.isReturn()) {
        rets.add(i.address());
      }
      all[0]++;
      if (!padded || !i.mnemonic().equals("int3")) {
        kept[0] = all[0];
        kept[1] = i.end();
      }
    });
    if (decoded != code.length) {
      long at = entry + decoded;
      throw new UndecodableCodeException(name + ": no valid x86-64 instruction at 0x" + Long.toHexString(at)
          + " (offset " + decoded + " of " + code.length + ")", at);
    }
    long end = kept[1];
    int prologue = prologue(first, entry, end);
    return new FunctionCode(name, entry, end, entry + prologue, rets, (int) kept[0]);
  }

  /**
   * Length of the stack-check prologue at the start of {@code code} (the first bytes of a function, at
   * least 32 to see every form), 0 when none is recognized: also for too few or undecodable bytes. The
   * jump target is not checked against the function's end, which the bytes alone do not give.
   */
  public static int prologueLength(byte[] code, X86Decoder decoder) {
    X86Decoder.Decoded d = decoder.decode(code, 0, PROLOGUE_INSTRUCTIONS);
    return prologue(d.instructions(), 0, Long.MAX_VALUE);
  }

  /**
   * Where an entry probe goes in a function whose first bytes are {@code code} (at least 48, to see every
   * prologue and the instruction after it).
   *
   * <p>Past the stack-check prologue ({@link #prologueLength}) when the instruction there is one the kernel
   * emulates at a uprobe (a relative jump or call, {@code push}: Linux arch/x86/kernel/uprobes.c,
   * {@code branch_setup_xol_ops}, {@code push_setup_xol_ops}): Go &gt;= 1.21's {@code push rbp}. Else (Go
   * 1.17–1.20 set up the frame with {@code sub rsp, N}, which the kernel single-steps: a second trap, ~10x
   * the cost of the hit) on the prologue's {@code jbe} itself, which the kernel emulates: the probe's
   * program must then return at once when the jump will be taken (CF or ZF set: the stack grows and the
   * function runs again from its entry, hitting the probe again), see {@code stack_check_taken} in
   * bpf/process.bpf.h. Registers are the entry's at both places ({@code cmp} writes only the flags, the
   * {@code lea} of large frames R12, or RAX in ABI0 code, before either place).
   *
   * @param offset bytes from the function's entry
   * @param atStackCheck whether the place is the prologue's {@code jbe}
   */
  public record EntryPlace(int offset, boolean atStackCheck) {}

  /** As {@link EntryPlace}: 0 (the entry) when no prologue is recognized. */
  public static EntryPlace entryPlace(byte[] code, X86Decoder decoder) {
    List<Instruction> ins = decoder.decode(code, 0, PROLOGUE_INSTRUCTIONS + 1).instructions();
    int len = prologue(ins, 0, Long.MAX_VALUE);
    if (len == 0) {
      return new EntryPlace(0, false);
    }
    Instruction jbe = null;
    Instruction next = null;
    for (Instruction i : ins) {
      if (i.end() == len) {
        jbe = i;
      } else if (i.address() == len) {
        next = i;
      }
    }
    if (next == null || emulated(next) || jbe == null) {
      return new EntryPlace(len, false);
    }
    return new EntryPlace((int) jbe.address(), true);
  }

  /**
   * Where the stack-check prologue at the start of {@code code} (a whole function, first byte at {@code
   * entry}) jumps to grow the stack: the tail that calls {@code runtime.morestack}; -1 when no prologue is
   * recognized.
   */
  static long stackCheckTarget(byte[] code, long entry, X86Decoder decoder) {
    List<Instruction> ins = decoder.decode(java.util.Arrays.copyOf(code, Math.min(code.length, 64)), entry,
        PROLOGUE_INSTRUCTIONS).instructions();
    int len = prologue(ins, entry, entry + code.length);
    if (len == 0) {
      return -1;
    }
    for (Instruction i : ins) {
      if (i.end() == entry + len) {
        return Long.parseUnsignedLong(i.operands().substring(2), 16);
      }
    }
    return -1;
  }

  /** Whether the kernel emulates {@code i} at a uprobe: a relative jump or call, or a push of a register. */
  static boolean emulated(Instruction i) {
    String m = i.mnemonic();
    if (m.equals("push")) {
      return PUSH_REGISTER.matcher(i.operands()).matches();
    }
    return (m.startsWith("j") || m.equals("call")) && TARGET.matcher(i.operands()).matches();
  }

  private static final Pattern PUSH_REGISTER = Pattern.compile("r(?:[abcd]x|[sd]i|[sb]p|8|9|1[0-5])");
  private static final String TLS_G = "qword ptr fs:[0xfffffffffffffff8]";
  private static final Pattern LEA_FRAME = Pattern.compile("(r12|rax), \\[rsp - (?:0x[0-9a-f]+|[0-9])\\]");
  private static final Pattern CMP_GUARD = Pattern.compile("(rsp|r12|rax), qword ptr \\[(r14|rcx) \\+ 0x10\\]");
  private static final Pattern TARGET = Pattern.compile("0x[0-9a-f]{1,16}");

  /** Bytes from {@code entry} to just after the prologue's jbe, 0 when the instructions are no prologue. */
  private static int prologue(List<Instruction> ins, long entry, long end) {
    int i = 0;
    boolean tls = false;
    if (i < ins.size() && is(ins.get(i), "mov", "rcx, " + TLS_G)) {
      tls = true;
      i++;
    }
    String compared = "rsp";
    if (i < ins.size() && ins.get(i).mnemonic().equals("lea")) {
      Matcher m = LEA_FRAME.matcher(ins.get(i).operands());
      if (!m.matches()) {
        return 0;
      }
      compared = m.group(1);
      i++;
    }
    if (i >= ins.size() || !ins.get(i).mnemonic().equals("cmp")) {
      return 0;
    }
    Matcher cmp = CMP_GUARD.matcher(ins.get(i).operands());
    if (!cmp.matches() || !cmp.group(1).equals(compared) || !cmp.group(2).equals(tls ? "rcx" : "r14")) {
      return 0;
    }
    i++;
    if (i >= ins.size() || !ins.get(i).mnemonic().equals("jbe")) {
      return 0;
    }
    Instruction jbe = ins.get(i);
    String t = jbe.operands();
    if (!TARGET.matcher(t).matches()) {
      return 0;
    }
    long target = Long.parseUnsignedLong(t.substring(2), 16);
    if (Long.compareUnsigned(target, jbe.end()) < 0 || Long.compareUnsigned(target, end) >= 0) {
      return 0; // the morestack tail is after the prologue, inside the function
    }
    return (int) (jbe.end() - entry);
  }

  /**
   * Where a probe goes past a function's opening guard, or why there is none.
   *
   * @param address the virtual address of the first instruction past the guard, when found
   * @param reason why no such place was found (one line), else null
   */
  public record Guard(long address, String reason) {
    public boolean found() {
      return reason == null;
    }
  }

  /** Instructions decoded from a function's entry to find its guard. */
  private static final int GUARD_INSTRUCTIONS = 32;

  private static final Pattern XCHG_MEM_REG =
      Pattern.compile("(?:byte|word|dword|qword) ptr \\[(\\w+) \\+ (?:0x[0-9a-f]+|[0-9]+)\\], (\\w+)");
  private static final Pattern XCHG_REG_MEM =
      Pattern.compile("(\\w+), (?:byte|word|dword|qword) ptr \\[(\\w+) \\+ (?:0x[0-9a-f]+|[0-9]+)\\]");
  private static final Pattern LOAD = Pattern.compile("(\\w+), qword ptr \\[(\\w+)(?: \\+ (?:0x[0-9a-f]+|[0-9]+))?\\]");
  private static final Pattern CMP_IMM = Pattern.compile("(\\w+), (?:0x[0-9a-f]+|[0-9]+)");

  /**
   * The place past a function's opening guard {@code if s.swapState(streamDone) == streamDone { return }}
   * (grpc-go {@code (*http2Client).closeStream} in every release from v1.30 to v1.85), where only the
   * call that swapped the state first arrives: a probe there is hit once per stream, not once per call.
   *
   * <p>What is recognized, decoding from the entry (Go 1.17 to 1.26 compile the guard this way:
   * {@code swapState} is {@code atomic.SwapUint32}, inlined):
   *
   * <pre>
   *   [the stack-check prologue]                     (see above)
   *   ... no branch, no call ...
   *   [mov P, qword ptr [S + off]]                   the embedded *Stream (grpc-go v1.69-v1.76)
   *   xchg dword ptr [S|P + off], R                  the first XCHG whose memory base is the stream
   *   cmp R, imm                                     its old value against streamDone
   *   je early | jne past                            je: past the guard is the next instruction
   * </pre>
   *
   * and no instruction from the entry to the branch writes a register in {@code keep} (the decoder's
   * register information, implicit writes included), so that the arguments a probe reads there are
   * still in the registers they were in at the entry.
   *
   * <p>The place is then moved forward over comparisons ({@code cmp}, {@code test}: they write only the
   * flags) to the relative jump they feed, when one follows and nothing else in the function jumps into
   * what is skipped: every catalog build has {@code cmp dword ptr [rip + runtime.writeBarrier], 0; je|jne}
   * there. The kernel emulates a relative jump or call at a uprobe (Linux arch/x86/kernel/uprobes.c,
   * {@code branch_setup_xol_ops}, since 3.15); any other instruction, a {@code cmp} with a RIP-relative
   * operand too, is executed out of line and single-stepped, which costs a second trap per hit. The
   * registers are the same at both places.
   *
   * @param base the 64-bit register holding the stream argument at entry, e.g. {@code rbx}
   * @param keep the 64-bit registers of the arguments the probe reads
   */
  public static Guard pastGuard(GoBinary bin, GoFunction f, String base, java.util.Set<String> keep) throws GoBinaryException {
    CodeRange range = ranges(bin, List.of(f)).get(f.name());
    long size = range.end() - f.entry();
    if (size <= 0 || size > MAX_FUNCTION_BYTES) {
      return new Guard(0, "implausible size of " + f.name());
    }
    byte[] code = new byte[(int) size];
    bin.elf().readAddress(f.entry(), size).get(code);
    return pastGuard(f.name(), f.entry(), range.end(), code, CapstoneDecoder.get(), base, keep);
  }

  /** As {@link #pastGuard(GoBinary, GoFunction, String, java.util.Set)}, on the function's first bytes. */
  public static Guard pastGuard(String name, long entry, long end, byte[] code, X86Decoder decoder, String base,
      java.util.Set<String> keep) {
    Guard g = guard(name, entry, end, code, decoder, base, keep);
    return g.found() ? new Guard(toJump(g.address(), decoder.decode(code, entry, Integer.MAX_VALUE).instructions()), null) : g;
  }

  /** Comparisons skipped to reach the jump they feed. */
  private static final int COMPARISONS_SKIPPED = 2;

  /**
   * {@code place}, or the relative jump that follows it over at most {@link #COMPARISONS_SKIPPED}
   * comparisons when no instruction of {@code function} jumps past {@code place} into them or to the jump.
   */
  static long toJump(long place, List<Instruction> function) {
    int i = 0;
    while (i < function.size() && function.get(i).address() != place) {
      i++;
    }
    int k = i;
    while (k < function.size() && k - i < COMPARISONS_SKIPPED
        && (function.get(k).mnemonic().equals("cmp") || function.get(k).mnemonic().equals("test"))) {
      k++;
    }
    if (k == i || k >= function.size()) {
      return place;
    }
    Instruction jump = function.get(k);
    if (!jump.mnemonic().startsWith("j") || !TARGET.matcher(jump.operands()).matches()) {
      return place;
    }
    for (Instruction x : function) {
      boolean branch = x.mnemonic().startsWith("j") || x.mnemonic().startsWith("call") || x.mnemonic().startsWith("loop");
      if (branch && TARGET.matcher(x.operands()).matches()) {
        long target = Long.parseUnsignedLong(x.operands().substring(2), 16);
        if (Long.compareUnsigned(target, place) > 0 && Long.compareUnsigned(target, jump.address()) <= 0) {
          return place;
        }
      }
    }
    return jump.address();
  }

  private static Guard guard(String name, long entry, long end, byte[] code, X86Decoder decoder, String base,
      java.util.Set<String> keep) {
    List<Instruction> ins = new ArrayList<>();
    List<java.util.Set<String>> writes = new ArrayList<>();
    decoder.decodeWithWrites(code, entry, GUARD_INSTRUCTIONS, (i, w) -> {
      ins.add(i);
      writes.add(w);
    });
    long prologueEnd = entry + prologue(ins.subList(0, Math.min(PROLOGUE_INSTRUCTIONS, ins.size())), entry, end);
    java.util.Set<String> kept = new java.util.HashSet<>();
    keep.forEach(r -> kept.add(family(r)));
    // the stream's register, and those loaded from it (grpc-go v1.69-v1.76: ClientStream embeds *Stream)
    java.util.Set<String> stream = new java.util.HashSet<>(List.of(family(base)));
    for (int i = 0; i < ins.size(); i++) {
      Instruction x = ins.get(i);
      for (String w : writes.get(i)) {
        if (kept.contains(family(w))) {
          return new Guard(0, name + ": " + x + " writes " + w + " before the guard");
        }
      }
      Matcher load = LOAD.matcher(x.operands());
      if (x.mnemonic().equals("mov") && load.matches() && stream.contains(family(load.group(2)))) {
        stream.add(family(load.group(1)));
      } else if (!x.mnemonic().equals("xchg")) {
        for (String w : writes.get(i)) {
          if (!family(w).equals(family(base))) {
            stream.remove(family(w));
          }
        }
      }
      if (x.mnemonic().equals("xchg")) {
        Matcher a = XCHG_MEM_REG.matcher(x.operands());
        Matcher b = XCHG_REG_MEM.matcher(x.operands());
        String mem = a.matches() ? a.group(1) : b.matches() ? b.group(2) : null;
        String reg = a.matches() ? a.group(2) : b.matches() ? b.group(1) : null;
        if (mem == null || !stream.contains(family(mem))) {
          return new Guard(0, name + ": the first XCHG, " + x + ", is not on the stream in " + base);
        }
        if (i + 2 >= ins.size()) {
          return new Guard(0, name + ": the code ends after " + x);
        }
        Instruction cmp = ins.get(i + 1);
        Instruction jcc = ins.get(i + 2);
        Matcher c = CMP_IMM.matcher(cmp.operands());
        if (!cmp.mnemonic().equals("cmp") || !c.matches() || !c.group(1).equals(reg)) {
          return new Guard(0, name + ": " + x + " is not followed by a comparison of " + reg + ", but " + cmp);
        }
        for (int k = i + 1; k <= i + 2; k++) {
          for (String w : writes.get(k)) {
            if (kept.contains(family(w))) {
              return new Guard(0, name + ": " + ins.get(k) + " writes " + w + " before the guard");
            }
          }
        }
        if (!TARGET.matcher(jcc.operands()).matches()) {
          return new Guard(0, name + ": no conditional jump after " + cmp + ", but " + jcc);
        }
        long target = Long.parseUnsignedLong(jcc.operands().substring(2), 16);
        if (Long.compareUnsigned(target, entry) < 0 || Long.compareUnsigned(target, end) >= 0) {
          return new Guard(0, name + ": " + jcc + " leaves the function");
        }
        return switch (jcc.mnemonic()) {
          case "je" -> new Guard(jcc.end(), null);
          case "jne" -> new Guard(target, null);
          default -> new Guard(0, name + ": " + jcc + " is no branch on equality");
        };
      }
      boolean branch = x.mnemonic().startsWith("j") || x.mnemonic().startsWith("call") || x.isReturn()
          || x.mnemonic().startsWith("loop");
      if (branch && x.address() >= prologueEnd) {
        return new Guard(0, name + ": " + x + " comes before any XCHG on the stream");
      }
    }
    return new Guard(0, name + ": no XCHG on the stream in its first " + ins.size() + " instructions");
  }

  /** The 64-bit register a register name is part of ({@code ebx}, {@code bl} to {@code rbx}; {@code r9d} to {@code r9}). */
  static String family(String reg) {
    Matcher m = NUMBERED.matcher(reg);
    if (m.matches()) {
      return "r" + m.group(1);
    }
    for (String[] f : LEGACY) {
      for (String r : f) {
        if (r.equals(reg)) {
          return f[0];
        }
      }
    }
    return reg;
  }

  private static final Pattern NUMBERED = Pattern.compile("r(\\d+)[dwb]?");
  private static final String[][] LEGACY = {
    {"rax", "eax", "ax", "al", "ah"}, {"rbx", "ebx", "bx", "bl", "bh"}, {"rcx", "ecx", "cx", "cl", "ch"},
    {"rdx", "edx", "dx", "dl", "dh"}, {"rsi", "esi", "si", "sil"}, {"rdi", "edi", "di", "dil"},
    {"rbp", "ebp", "bp", "bpl"}, {"rsp", "esp", "sp", "spl"},
  };

  private static boolean is(Instruction i, String mnemonic, String operands) {
    return i.mnemonic().equals(mnemonic) && i.operands().equals(operands);
  }
}
