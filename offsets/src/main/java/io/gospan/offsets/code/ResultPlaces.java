package io.gospan.offsets.code;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a probe reads a function's first result (RAX at its {@code RET}s, Go's ABIInternal) at an instruction
 * the kernel emulates instead of single-stepping it.
 *
 * <p><b>Why.</b> A uprobe on an instruction the kernel cannot emulate executes it out of line and
 * single-steps it: a second trap per hit. The kernel emulates relative jumps and calls and {@code push}
 * (Linux arch/x86/kernel/uprobes.c, {@code branch_setup_xol_ops}, {@code push_setup_xol_ops}); {@code ret},
 * {@code pop}, {@code add}, {@code mov} are single-stepped. On the development VM (docs/benchmarks.md,
 * "Which instructions a uprobe is cheap on") a hit on a single-stepped instruction costs the traced thread
 * ~10 µs, one on an emulated jump, call or push ~1 µs.
 *
 * <p><b>What is found.</b> For each {@code ret} whose RAX is not provably nil: a relative jump {@code J}
 * (conditional or not) of the function such that
 * <ol>
 *   <li>on every path to the {@code ret}, the last instruction writing RAX is {@code mov rax, qword ptr [rsp
 *       + d]} (Go reloads a value that lives across calls from its stack slot: {@code return s, nil}), the
 *       same {@code d} on every path, with no store into that slot and no change of RSP (calls aside) between
 *       that load and the function's epilogue;</li>
 *   <li>{@code J} dominates the {@code ret}: every path from the entry to it passes {@code J};</li>
 *   <li>from {@code J} every path stays in the function until that {@code ret}: no other {@code ret}, no way
 *       back to {@code J}, no store into the slot, no change of RSP but calls and the epilogue.</li>
 * </ol>
 * When the slot the RET reloads is itself a copy of another ({@code mov R, qword ptr [rsp + a]; mov qword ptr
 * [rsp + d], R} on every path: Go &lt;= 1.20 copying {@code s} into a named result before the deferred calls
 * run, grpc-go v1.30–v1.40), {@code J} may lie before the copy, reading slot {@code a}, if every path from
 * it passes a copy and none stores into {@code a}.
 *
 * <p>So a probe at {@code J} is hit once per call that returns there, exactly when it will, and reads the
 * result from {@code [rsp + d]}: the slot holds it from {@code J} on (nothing writes it until the
 * {@code ret}'s load, which reads the result from it). A {@code ret} whose RAX comes from {@code xor eax,
 * eax} on every path (an error return's nil) needs no probe, nor one no path from the entry reaches (the
 * landing a deferred call's {@code recover} returns through: Go src/runtime/panic.go; a recovered panic
 * inside the function is not seen). When a {@code ret} has no such {@code J}, or
 * two have different slots, the answer is the {@code ret}s themselves with RAX ({@link #slot()} -1).
 *
 * <p>Edges: a relative jump goes to its target (and on, when conditional); a call falls through (a call that
 * does not return adds an edge that is never taken: the conditions above only get harder to meet); an
 * indirect jump gives up (no places). Bounded: at most {@link #MAX_CANDIDATES} jumps tried per {@code ret},
 * each a walk over the function's instructions.
 *
 * @param addresses the virtual addresses to probe, ascending
 * @param slot the byte offset from RSP of the qword holding the result at every address, or -1: RAX (the
 *     addresses are the function's {@code ret}s)
 * @param nilReturns {@code ret}s left out: RAX is zero there on every path
 * @param reason why the places are the {@code ret}s (one line), null when they are emulated jumps
 */
public record ResultPlaces(List<Long> addresses, int slot, List<Long> nilReturns, String reason) {
  /** Jumps tried per {@code ret}, the nearest before it first. */
  public static final int MAX_CANDIDATES = 256;

  public ResultPlaces {
    addresses = List.copyOf(addresses);
    nilReturns = List.copyOf(nilReturns);
  }

  /** Whether the places are emulated jumps reading a stack slot. */
  public boolean emulated() {
    return slot >= 0;
  }

  /** Go &lt;= 1.20's epilogue restores RBP with a load instead of {@code pop rbp}. */
  private static final Pattern RBP_RESTORE = Pattern.compile("rbp, qword ptr \\[rsp(?: \\+ (0x[0-9a-f]+|[0-9]+))?\\]");
  /**
   * Analyzes a function of {@code bin} (decoded with Capstone).
   *
   * @throws UndecodableCodeException its range is implausible (larger than {@link FunctionCode#MAX_FUNCTION_BYTES})
   * @throws DecoderUnavailableException libcapstone cannot be loaded
   * @throws io.gospan.offsets.CorruptBinaryException its bytes are not in the file
   */
  public static ResultPlaces of(GoBinary bin, GoFunction f) throws GoBinaryException {
    FunctionCode.CodeRange range = FunctionCode.ranges(bin, List.of(f)).get(f.name());
    long size = range.end() - f.entry();
    if (size <= 0 || size > FunctionCode.MAX_FUNCTION_BYTES) {
      throw new UndecodableCodeException(bin.path() + ": " + f.name() + ": implausible size " + size, f.entry());
    }
    byte[] code = new byte[(int) size];
    bin.elf().readAddress(f.entry(), size).get(code);
    return analyze(f.name(), f.entry(), code, CapstoneDecoder.get());
  }

  private static final Pattern TARGET = Pattern.compile("0x[0-9a-f]{1,16}");
  private static final Pattern SLOT_LOAD = Pattern.compile("rax, qword ptr \\[rsp(?: \\+ (0x[0-9a-f]+|[0-9]+))?\\]");
  /** A memory destination relative to RSP: its width and displacement. */
  private static final Pattern RSP_DEST =
      Pattern.compile("(byte|word|dword|qword|xmmword|ymmword|zmmword) ptr \\[rsp(?: \\+ (0x[0-9a-f]+|[0-9]+))?\\],.*");

  /**
   * Analyzes one whole function ({@code code}, its first byte at {@code entry}).
   *
   * @return never null; the {@code ret}s with RAX and a reason when no emulated places are found
   */
  public static ResultPlaces analyze(String name, long entry, byte[] code, X86Decoder decoder) {
    List<Instruction> ins = new ArrayList<>();
    List<Set<String>> writes = new ArrayList<>();
    int decoded = decoder.decodeWithWrites(code, entry, Integer.MAX_VALUE, (i, w) -> {
      ins.add(i);
      writes.add(w);
    });
    List<Long> rets = new ArrayList<>();
    ins.stream().filter(Instruction::isReturn).forEach(i -> rets.add(i.address()));
    if (decoded != code.length) {
      return new ResultPlaces(rets, -1, List.of(),
          name + ": decoded " + decoded + " of " + code.length + " bytes (no register information further)");
    }
    Graph g = Graph.of(ins, entry, entry + code.length);
    if (g.reason != null) {
      return new ResultPlaces(rets, -1, List.of(), name + ": " + g.reason);
    }
    List<Long> places = new ArrayList<>();
    List<Long> nil = new ArrayList<>();
    int slot = -1;
    BitSet reachable = g.reachable();
    for (int r = 0; r < ins.size(); r++) {
      if (!ins.get(r).isReturn()) {
        continue;
      }
      if (!reachable.get(r)) {
        continue; // a deferred call's recovery landing (runtime.deferreturn): no path from the entry
      }
      Source src = source(ins, writes, g, r);
      if (src.nil) {
        nil.add(ins.get(r).address());
        continue;
      }
      if (src.reason != null) {
        return new ResultPlaces(rets, -1, List.of(), name + ": the RET at 0x" + Long.toHexString(ins.get(r).address())
            + ": " + src.reason);
      }
      int j = jumpFor(ins, writes, g, r, src.slot, src.epilogue, null);
      int read = src.slot;
      if (j < 0 && src.copiedFrom >= 0) {
        // Go <= 1.20 with named results and a deferred call: `return s, nil` copies s into the named
        // result's slot before the deferred calls; before the copy s is read from its own slot
        j = jumpFor(ins, writes, g, r, src.copiedFrom, src.epilogue, src.copies);
        read = src.copiedFrom;
      }
      if (slot >= 0 && read != slot) {
        return new ResultPlaces(rets, -1, List.of(), name + ": results read from two stack slots, 0x"
            + Integer.toHexString(slot) + " and 0x" + Integer.toHexString(read));
      }
      slot = read;
      if (j < 0) {
        return new ResultPlaces(rets, -1, List.of(), name + ": no emulated jump before the RET at 0x"
            + Long.toHexString(ins.get(r).address()) + " reads its result");
      }
      places.add(ins.get(j).address());
    }
    if (places.isEmpty()) {
      return new ResultPlaces(rets, -1, List.of(), name + ": no RET returns a result that is not nil");
    }
    places.sort(Long::compareUnsigned);
    return new ResultPlaces(places, slot, nil, null);
  }

  /** The control flow between a function's instructions, by index. */
  private static final class Graph {
    final List<int[]> succ = new ArrayList<>();
    final List<List<Integer>> pred = new ArrayList<>();
    String reason;

    static Graph of(List<Instruction> ins, long entry, long end) {
      Graph g = new Graph();
      Map<Long, Integer> at = new HashMap<>();
      for (int i = 0; i < ins.size(); i++) {
        at.put(ins.get(i).address(), i);
        g.pred.add(new ArrayList<>());
      }
      for (int i = 0; i < ins.size(); i++) {
        Instruction x = ins.get(i);
        String m = x.mnemonic();
        int next = i + 1 < ins.size() ? i + 1 : -1;
        int[] s;
        if (x.isReturn() || m.equals("ud2") || m.equals("int3") || m.equals("hlt")) {
          s = new int[0];
        } else if (m.startsWith("j") || m.startsWith("loop")) {
          if (!TARGET.matcher(x.operands()).matches()) {
            g.reason = "an indirect jump at 0x" + Long.toHexString(x.address());
            return g;
          }
          long t = Long.parseUnsignedLong(x.operands().substring(2), 16);
          Integer ti = at.get(t);
          boolean inside = Long.compareUnsigned(t, entry) >= 0 && Long.compareUnsigned(t, end) < 0;
          if (inside && ti == null) {
            g.reason = "a jump into an instruction at 0x" + Long.toHexString(x.address());
            return g;
          }
          boolean conditional = !m.equals("jmp");
          int target = ti == null ? -1 : ti; // outside: a tail call, the function ends there
          s = conditional ? ints(next, target) : ints(target);
        } else {
          s = ints(next);
        }
        g.succ.add(s);
      }
      for (int i = 0; i < ins.size(); i++) {
        for (int s : g.succ.get(i)) {
          g.pred.get(s).add(i);
        }
      }
      return g;
    }

    /** The instructions on some path from the entry. */
    BitSet reachable() {
      BitSet seen = new BitSet();
      ArrayDeque<Integer> todo = new ArrayDeque<>();
      todo.add(0);
      seen.set(0);
      while (!todo.isEmpty()) {
        for (int s : succ.get(todo.poll())) {
          if (!seen.get(s)) {
            seen.set(s);
            todo.add(s);
          }
        }
      }
      return seen;
    }

    private static int[] ints(int... v) {
      return java.util.Arrays.stream(v).filter(x -> x >= 0).distinct().toArray();
    }
  }

  /** Where a RET's RAX comes from. */
  /**
   * @param copiedFrom when every nearest store into {@code slot} before its loads is a copy from another
   *     slot ({@code mov R, qword ptr [rsp + from]; mov qword ptr [rsp + slot], R}): that slot, else -1
   * @param copies those copying stores (indexes)
   */
  private record Source(boolean nil, int slot, int epilogue, String reason, int copiedFrom, BitSet copies) {
    Source(boolean nil, int slot, int epilogue, String reason) {
      this(nil, slot, epilogue, reason, -1, new BitSet());
    }
  }

  /**
   * The source of RAX at the RET {@code r}: walks back over every path to the nearest write of RAX.
   * {@code epilogue} is the index of the first of the instructions right before the RET that restore the
   * caller's frame ({@code add rsp, imm}, {@code pop rbp} or {@code mov rbp, qword ptr [rsp + N]}), with any
   * {@code nop} among them.
   */
  private static Source source(List<Instruction> ins, List<Set<String>> writes, Graph g, int r) {
    int epilogue = r;
    while (epilogue > 0 && g.pred.get(epilogue).size() == 1 && g.pred.get(epilogue).get(0) == epilogue - 1) {
      Instruction p = ins.get(epilogue - 1);
      boolean restores = (p.mnemonic().equals("add") && p.operands().startsWith("rsp, "))
          || p.mnemonic().equals("nop")
          || (p.mnemonic().equals("pop") && p.operands().equals("rbp"))
          || (p.mnemonic().equals("mov") && RBP_RESTORE.matcher(p.operands()).matches());
      if (!restores) {
        break;
      }
      epilogue--;
    }
    boolean nil = false;
    int slot = -1;
    BitSet seen = new BitSet();
    ArrayDeque<Integer> todo = new ArrayDeque<>();
    todo.add(epilogue);
    seen.set(epilogue);
    // the instructions passed on the way back (RAX not written yet): checked for stores into the slot below
    List<Integer> passed = new ArrayList<>();
    while (!todo.isEmpty()) {
      int i = todo.poll();
      List<Integer> preds = g.pred.get(i);
      if (i == 0 || (preds.isEmpty() && i != epilogue)) {
        return new Source(false, -1, epilogue, "RAX is not written on a path from the entry");
      }
      for (int p : preds) {
        if (seen.get(p)) {
          continue;
        }
        seen.set(p);
        Instruction x = ins.get(p);
        if (writesFamily(writes.get(p), "rax")) {
          if (x.mnemonic().equals("xor") && x.operands().equals("eax, eax")) {
            if (slot >= 0) {
              return new Source(false, -1, epilogue, "RAX is nil on one path and a stack slot on another");
            }
            nil = true;
            continue;
          }
          Matcher m = SLOT_LOAD.matcher(x.operands());
          if (!x.mnemonic().equals("mov") || !m.matches()) {
            return new Source(false, -1, epilogue, "RAX comes from " + x);
          }
          int d = m.group(1) == null ? 0 : (int) Long.decode(m.group(1)).longValue();
          if (nil || (slot >= 0 && slot != d)) {
            return new Source(false, -1, epilogue, "RAX comes from different places");
          }
          slot = d;
          continue;
        }
        if (!x.mnemonic().startsWith("call") && writesFamily(writes.get(p), "rsp")) {
          return new Source(false, -1, epilogue, x + " moves RSP after the result is loaded");
        }
        passed.add(p);
        todo.add(p);
      }
    }
    if (nil) {
      return new Source(true, -1, epilogue, null);
    }
    if (slot < 0) {
      return new Source(false, -1, epilogue, "RAX is not loaded from a stack slot");
    }
    for (int p : passed) {
      if (storesInto(ins.get(p), slot)) {
        return new Source(false, -1, epilogue, ins.get(p) + " stores into the result's slot after its load");
      }
    }
    for (Instruction x : ins) {
      if (x.mnemonic().equals("lea") && LEA_RSP.matcher(x.operands()).matches()
          && displacement(LEA_RSP.matcher(x.operands())) == slot) {
        return new Source(false, -1, epilogue, x + " takes the address of the result's slot");
      }
    }
    Stored st = stored(ins, g, seen, slot);
    return new Source(st.nil, slot, epilogue, null, st.copiedFrom, st.copies);
  }

  private static final Pattern LEA_RSP = Pattern.compile("\\w+, \\[rsp(?: \\+ (0x[0-9a-f]+|[0-9]+))?\\]");

  private static long displacement(Matcher m) {
    m.matches();
    return m.group(1) == null ? 0 : Long.decode(m.group(1));
  }

  /** The nearest stores into a slot before its loads: all zero, or all copies from one other slot. */
  private record Stored(boolean nil, int copiedFrom, BitSet copies) {}

  private static final Pattern SLOT_STORE = Pattern.compile("qword ptr \\[rsp(?: \\+ (0x[0-9a-f]+|[0-9]+))?\\], (\\w+)");
  private static final Pattern LOAD_FROM_SLOT = Pattern.compile("(\\w+), qword ptr \\[rsp(?: \\+ (0x[0-9a-f]+|[0-9]+))?\\]");

  /**
   * What the slot holds at its loads: walking back from the loads (the instructions {@code after} has not
   * seen are before them) to the nearest store into the slot on every path. Zero on every path when each
   * is {@code mov qword ptr [rsp + slot], 0} (Go &lt;= 1.20's named results: {@code return nil, err} stores
   * them before the deferred calls run); a copy of another slot when each is {@code mov qword ptr [rsp +
   * slot], R} right after {@code mov R, qword ptr [rsp + from]}, the same {@code from} ({@code return s,
   * nil} there).
   */
  private static Stored stored(List<Instruction> ins, Graph g, BitSet after, int slot) {
    Stored none = new Stored(false, -1, new BitSet());
    // the loads: seen by the walk back, writing RAX (the walk did not go past them)
    ArrayDeque<Integer> todo = new ArrayDeque<>();
    BitSet seen = new BitSet();
    for (int i = after.nextSetBit(0); i >= 0; i = after.nextSetBit(i + 1)) {
      Instruction x = ins.get(i);
      if (x.mnemonic().equals("mov") && SLOT_LOAD.matcher(x.operands()).matches()) {
        todo.add(i);
        seen.set(i);
      }
    }
    boolean zero = false;
    int from = -1;
    BitSet copies = new BitSet();
    while (!todo.isEmpty()) {
      int i = todo.poll();
      if (i == 0) {
        return none;
      }
      for (int p : g.pred.get(i)) {
        if (seen.get(p)) {
          continue;
        }
        seen.set(p);
        Instruction x = ins.get(p);
        if (!storesInto(x, slot)) {
          todo.add(p);
          continue;
        }
        Matcher st = SLOT_STORE.matcher(x.operands());
        if (!x.mnemonic().equals("mov") || !st.matches() || displacement(st) != slot) {
          return none;
        }
        if (st.group(2).equals("0")) {
          zero = true;
          continue;
        }
        // a copy: the store's only way in is the load right before it
        Instruction load = p > 0 ? ins.get(p - 1) : null;
        Matcher ld = load == null ? null : LOAD_FROM_SLOT.matcher(load.operands());
        if (ld == null || !load.mnemonic().equals("mov") || !ld.matches() || !ld.group(1).equals(st.group(2))
            || g.pred.get(p).size() != 1 || g.pred.get(p).get(0) != p - 1) {
          return none;
        }
        int d = ld.group(2) == null ? 0 : (int) Long.decode(ld.group(2)).longValue();
        if (d == slot || (from >= 0 && d != from)) {
          return none;
        }
        from = d;
        copies.set(p);
      }
    }
    if (zero && from < 0) {
      return new Stored(true, -1, copies);
    }
    return zero ? none : new Stored(false, from, copies);
  }

  /**
   * The emulated jump for the RET {@code r} whose result is in {@code slot} from it on, or -1; with {@code
   * copies}, every path from it to {@code r} must pass one of those instructions (the copy of the slot into
   * the one the RET's result is loaded from).
   */
  private static int jumpFor(List<Instruction> ins, List<Set<String>> writes, Graph g, int r, int slot, int epilogue,
      BitSet copies) {
    int tried = 0;
    for (int j = r - 1; j >= 0 && tried < MAX_CANDIDATES; j--) {
      Instruction x = ins.get(j);
      if (!x.mnemonic().startsWith("j") || !TARGET.matcher(x.operands()).matches() || g.succ.get(j).length == 0) {
        continue;
      }
      tried++;
      if (dominates(g, j, r) && staysOnCourse(ins, writes, g, j, r, slot, epilogue)
          && (copies == null || passes(g, j, r, copies))) {
        return j;
      }
    }
    return -1;
  }

  /** Whether every path from {@code j} to {@code r} passes one of {@code via}. */
  private static boolean passes(Graph g, int j, int r, BitSet via) {
    BitSet seen = new BitSet();
    ArrayDeque<Integer> todo = new ArrayDeque<>();
    todo.add(j);
    seen.set(j);
    while (!todo.isEmpty()) {
      int i = todo.poll();
      if (i == r) {
        return false;
      }
      for (int s : g.succ.get(i)) {
        if (!via.get(s) && !seen.get(s)) {
          seen.set(s);
          todo.add(s);
        }
      }
    }
    return true;
  }

  /** Whether every path from the entry (index 0) to {@code r} passes {@code j}. */
  private static boolean dominates(Graph g, int j, int r) {
    if (j == 0) {
      return true;
    }
    BitSet seen = new BitSet();
    ArrayDeque<Integer> todo = new ArrayDeque<>();
    todo.add(0);
    seen.set(0);
    while (!todo.isEmpty()) {
      int i = todo.poll();
      if (i == r) {
        return false;
      }
      for (int s : g.succ.get(i)) {
        if (s != j && !seen.get(s)) {
          seen.set(s);
          todo.add(s);
        }
      }
    }
    return true;
  }

  /**
   * Whether from {@code j} every path reaches the RET {@code r} and no other, never comes back to {@code
   * j}, stores nothing into {@code slot} and moves RSP only by calls or in the epilogue.
   */
  private static boolean staysOnCourse(List<Instruction> ins, List<Set<String>> writes, Graph g, int j, int r,
      int slot, int epilogue) {
    BitSet seen = new BitSet();
    ArrayDeque<Integer> todo = new ArrayDeque<>();
    for (int s : g.succ.get(j)) {
      seen.set(s);
      todo.add(s);
    }
    while (!todo.isEmpty()) {
      int i = todo.poll();
      if (i == j) {
        return false;
      }
      Instruction x = ins.get(i);
      if (i == r) {
        continue;
      }
      if (x.isReturn() || g.succ.get(i).length == 0 && !x.mnemonic().equals("int3") && !x.mnemonic().equals("ud2")) {
        return false; // another RET, or a tail jump out of the function
      }
      if (storesInto(x, slot)) {
        return false;
      }
      if (i < epilogue || i > r) {
        if (!x.mnemonic().startsWith("call") && writesFamily(writes.get(i), "rsp")) {
          return false;
        }
      }
      for (int s : g.succ.get(i)) {
        if (s == j) {
          return false;
        }
        if (!seen.get(s)) {
          seen.set(s);
          todo.add(s);
        }
      }
    }
    return true;
  }

  /** Whether {@code x}'s memory destination is RSP-relative and overlaps the qword at {@code [rsp + slot]}. */
  static boolean storesInto(Instruction x, int slot) {
    String m = x.mnemonic();
    if (m.startsWith("cmp") || m.startsWith("test") || m.equals("push") || m.startsWith("call") || m.startsWith("j")) {
      return false;
    }
    Matcher d = RSP_DEST.matcher(x.operands());
    if (!d.matches()) {
      return false;
    }
    long at = d.group(2) == null ? 0 : Long.decode(d.group(2));
    int width = switch (d.group(1)) {
      case "byte" -> 1;
      case "word" -> 2;
      case "dword" -> 4;
      case "qword" -> 8;
      case "xmmword" -> 16;
      case "ymmword" -> 32;
      default -> 64;
    };
    return at < slot + 8 && at + width > slot;
  }

  private static boolean writesFamily(Set<String> writes, String family) {
    for (String w : writes) {
      if (FunctionCode.family(w).equals(family)) {
        return true;
      }
    }
    return false;
  }
}
