package io.gospan.offsets.resolve;

import io.gospan.offsets.code.ArgumentSpills;
import io.gospan.offsets.dwarf.FunctionParameters;
import io.gospan.offsets.dwarf.Parameter;
import io.gospan.offsets.dwarf.Piece;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A function's input parameters at its entry under the register ABI (Go ≥ 1.17): each parameter's name and
 * Go type, and the register, argument-area offset and size of each of its words, as the offsets catalog
 * records them per observed release ({@link #format()}, e.g. {@code t *google.golang.org/grpc/internal/
 * transport.http2Client = rax@0:8 | s *google.golang.org/grpc/internal/transport.ClientStream = rbx@8:8 | err
 * error = rcx@16:8 rdi@24:8 | ...}).
 *
 * <p>The catalog generator builds it from a build's DWARF (names, types, the ABI's registers) and its machine
 * code ({@link ArgumentSpills}: where the stack-growth tail saves each register); both must agree. A stripped
 * binary has no parameter names, but it has the same machine code: when its spills equal a catalogued layout's
 * register words exactly (every register, offset and size), its function takes the same parameters in the
 * same registers, and a parameter's location is read from that layout by name ({@link #location}).
 *
 * @param params the input parameters in order, the receiver first
 */
public record ArgumentLayout(List<Param> params) {
  /**
   * One parameter.
   *
   * @param name its name in the source ({@code _} when it has none)
   * @param type its Go type as DWARF names it, with import paths ({@code []golang.org/x/net/http2/hpack.HeaderField})
   * @param words its words in order: in registers, or one {@link Word#STACK} word for the whole value when
   *     it is passed on the stack; none for a zero-sized value
   */
  public record Param(String name, String type, List<Word> words) {
    public Param {
      words = List.copyOf(words);
    }
  }

  /**
   * One word of a parameter.
   *
   * @param register the 64-bit register ({@code rax}, {@code r11}), a vector register ({@code xmm0}), or
   *     {@link #STACK}
   * @param offset bytes from the start of the argument area (its spill slot; for {@link #STACK}: bytes above
   *     SP at the entry)
   * @param size bytes
   */
  public record Word(String register, int offset, int size) {
    /** The register of a parameter passed on the stack. */
    public static final String STACK = "stack";

    @Override
    public String toString() {
      return register + "@" + offset + ":" + size;
    }
  }

  /** What separates parameters in {@link #format()} (no Go type contains it). */
  static final String SEPARATOR = " | ";
  private static final Pattern WORD = Pattern.compile("(\\w+)@(\\d+):(\\d+)");
  /** Registers by DWARF number (System V amd64 psABI), as the decoder names them. */
  private static final String[] DWARF_REGISTERS = {
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};
  private static final int FIRST_XMM = 17;
  /** An import path before a package-qualified name: everything up to its last slash. */
  private static final Pattern IMPORT_PATH = Pattern.compile("(?:[A-Za-z0-9_.~-]+/)+");

  public ArgumentLayout {
    params = List.copyOf(params);
  }

  /** The catalog's text form, parsed back by {@link #parse}. */
  public String format() {
    List<String> out = new ArrayList<>();
    for (Param p : params) {
      StringBuilder b = new StringBuilder(p.name()).append(' ').append(p.type()).append(" =");
      p.words().forEach(w -> b.append(' ').append(w));
      out.add(b.toString());
    }
    return String.join(SEPARATOR, out);
  }

  @Override
  public String toString() {
    return format();
  }

  /**
   * Parses {@link #format()}'s text.
   *
   * @throws IllegalArgumentException text of another shape
   */
  public static ArgumentLayout parse(String text) {
    List<Param> params = new ArrayList<>();
    if (text.isEmpty()) {
      return new ArgumentLayout(params);
    }
    for (String p : text.split(Pattern.quote(SEPARATOR), -1)) {
      int space = p.indexOf(' ');
      int eq = p.lastIndexOf(" =");
      if (space <= 0 || eq <= space) {
        throw new IllegalArgumentException("not a parameter layout: " + p);
      }
      List<Word> words = new ArrayList<>();
      String rest = p.substring(eq + 2).strip();
      if (!rest.isEmpty()) {
        for (String w : rest.split(" ")) {
          java.util.regex.Matcher m = WORD.matcher(w);
          if (!m.matches()) {
            throw new IllegalArgumentException("not a parameter word: " + w);
          }
          words.add(new Word(m.group(1), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))));
        }
      }
      params.add(new Param(p.substring(0, space), p.substring(space + 1, eq), words));
    }
    return new ArgumentLayout(params);
  }

  /**
   * The layout of a build whose DWARF and machine code both describe the function: names and types from
   * DWARF, registers from Go's calling convention on DWARF's types ({@code parametersByAbi}), each register
   * word's offset and size from the code's spills.
   *
   * @param byAbi the function's input parameters, from {@code GoBinary.Dwarf#parametersByAbi}
   * @return the layout, or why the two sources disagree
   */
  public static Result of(FunctionParameters byAbi, ArgumentSpills spills) {
    if (!spills.found()) {
      return Result.no(spills.reason());
    }
    List<ArgumentSpills.Spill> unused = new ArrayList<>(spills.spills());
    List<Param> params = new ArrayList<>();
    for (Parameter p : byAbi.parameters()) {
      List<Word> words = new ArrayList<>();
      for (Piece piece : p.pieces()) {
        switch (piece.kind()) {
          case REGISTER -> {
            String reg = register(piece.dwarfRegister());
            ArgumentSpills.Spill s = unused.stream().filter(x -> x.register().equals(reg)).findFirst().orElse(null);
            if (s == null) {
              return Result.no(p.name() + " is in " + reg + " by the ABI, which the code does not save (" + spills.describe() + ")");
            }
            if (s.size() != piece.size()) {
              return Result.no(p.name() + " has a " + piece.size() + "-byte word in " + reg + ", the code saves " + s.size());
            }
            unused.remove(s);
            words.add(new Word(reg, s.offset(), s.size()));
          }
          case STACK -> words.add(new Word(Word.STACK, (int) piece.stackOffset(), (int) piece.size()));
          default -> {
            return Result.no(p.name() + " has no location by the ABI");
          }
        }
      }
      params.add(new Param(p.name().isEmpty() ? "_" : p.name(), p.typeName(), words));
    }
    if (!unused.isEmpty()) {
      return Result.no("the code saves " + unused + ", which no parameter holds by the ABI");
    }
    return Result.of(new ArgumentLayout(params));
  }

  /**
   * A layout, or why there is none.
   *
   * @param layout null when there is none
   * @param reason why there is none (one line), else null
   */
  public record Result(ArgumentLayout layout, String reason) {
    static Result of(ArgumentLayout l) {
      return new Result(l, null);
    }

    static Result no(String why) {
      return new Result(null, why);
    }
  }

  /** The register words, ordered by offset. */
  public List<Word> registerWords() {
    List<Word> out = new ArrayList<>();
    params.forEach(p -> p.words().stream().filter(w -> !w.register().equals(Word.STACK)).forEach(out::add));
    out.sort(Comparator.comparingInt(Word::offset));
    return out;
  }

  /**
   * Whether a function whose code saves {@code spills} takes these parameters in the same places: every
   * register word of this layout, and nothing else, saved with the same register, offset and size.
   *
   * @return null when they agree, else what differs (one line)
   */
  public String mismatch(ArgumentSpills spills) {
    List<String> want = registerWords().stream().map(Word::toString).toList();
    List<String> have = spills.spills().stream().sorted(Comparator.comparingInt(ArgumentSpills.Spill::offset))
        .map(ArgumentSpills.Spill::toString).toList();
    return want.equals(have) ? null : "the code saves " + String.join(" ", have) + ", the layout has " + String.join(" ", want);
  }

  /** The parameter named {@code name}. */
  public Optional<Param> param(String name) {
    return params.stream().filter(p -> p.name().equals(name)).findFirst();
  }

  /**
   * Where word {@code word} of parameter {@code name} is at the function's entry.
   *
   * @return empty when there is no such parameter or word, or the word is passed on the stack
   */
  public Optional<ArgLocation> location(String name, int word) {
    return param(name).filter(p -> word < p.words().size()).map(p -> p.words().get(word))
        .filter(w -> !w.register().equals(Word.STACK)).flatMap(w -> dwarfRegister(w.register()).stream().boxed().findFirst())
        .map(ArgLocation::inRegister);
  }

  /** The register's name as the decoder writes it ({@code rax}, {@code xmm3}). */
  static String register(long dwarfRegister) {
    if (dwarfRegister >= 0 && dwarfRegister < DWARF_REGISTERS.length) {
      return DWARF_REGISTERS[(int) dwarfRegister];
    }
    if (dwarfRegister >= FIRST_XMM && dwarfRegister < FIRST_XMM + 16) {
      return "xmm" + (dwarfRegister - FIRST_XMM);
    }
    return "dwarf" + dwarfRegister;
  }

  /** The DWARF number of a register named as {@link #register} names it; empty for another name. */
  static java.util.OptionalInt dwarfRegister(String name) {
    for (int i = 0; i < DWARF_REGISTERS.length; i++) {
      if (DWARF_REGISTERS[i].equals(name)) {
        return java.util.OptionalInt.of(i);
      }
    }
    if (name.startsWith("xmm")) {
      try {
        int n = Integer.parseInt(name.substring(3));
        return n < 16 ? java.util.OptionalInt.of(FIRST_XMM + n) : java.util.OptionalInt.empty();
      } catch (NumberFormatException e) {
        return java.util.OptionalInt.empty();
      }
    }
    return java.util.OptionalInt.empty();
  }

  /**
   * A Go type name with each import path cut to its package name, as runtime type strings spell it: {@code
   * *google.golang.org/grpc/internal/transport.ServerStream} becomes {@code *transport.ServerStream}.
   */
  static String packageNames(String type) {
    return IMPORT_PATH.matcher(type).replaceAll("");
  }
}
