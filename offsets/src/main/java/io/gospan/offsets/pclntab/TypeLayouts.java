package io.gospan.offsets.pclntab;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.elf.ByteReader;
import io.gospan.offsets.elf.ElfFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Struct layouts from Go's runtime type information, which every Go binary carries, stripped or not:
 * the struct types reachable from the binary's itabs (their concrete and interface types), following
 * pointer, slice, array, channel and map element types and struct field types. A named struct is known
 * by its symbol spelling ({@code google.golang.org/grpc/internal/transport.http2Client}, {@code
 * net.TCPConn}); each gives its size and its fields' names and byte offsets.
 *
 * <p>Layouts (Go src/internal/abi/type.go, go1.26; src/runtime/type.go and src/reflect/type.go before;
 * 64-bit, the same since go1.16): {@code _type} is 48 bytes: {@code size} at 0, {@code tflag} at 20,
 * {@code kind} at 23 (low 5 bits), {@code str} at 40. The kind-specific part follows: {@code elem} at 48 for
 * array (17), chan (18), pointer (22) and slice (23); map (21): key at 48, elem at 56; struct (25): {@code
 * pkgPath} at 48, the {@code fields} slice at 56 (pointer, length). A struct field is {@code name} (a name
 * pointer), {@code typ}, and an offset word: {@code offsetAnon} = offset &lt;&lt; 1 | embedded before go1.19,
 * the plain offset since (reflect: "store embedded flag in name", go1.19). A name is one flag byte, then the
 * length (big-endian uint16 before go1.17, a uvarint since), then the bytes.
 */
public final class TypeLayouts {
  private static final int KIND_MASK = 0x1f;
  private static final int KIND_ARRAY = 17;
  private static final int KIND_CHAN = 18;
  private static final int KIND_MAP = 21;
  private static final int KIND_PTR = 22;
  private static final int KIND_SLICE = 23;
  private static final int KIND_STRUCT = 25;
  private static final int TFLAG_NAMED = 4;
  /** Types visited at most (a large program has some 10^4–10^5). */
  private static final int MAX_TYPES = 1 << 20;
  private static final int MAX_FIELDS = 1 << 16;

  /**
   * One struct type.
   *
   * @param size bytes
   * @param fields field name to byte offset, in declaration order (an embedded field is named by its type)
   * @param pointers the fields whose type is a pointer ({@code abi.Pointer})
   */
  public record Struct(long size, Map<String, Long> fields, Set<String> pointers) {}

  private final Map<String, Struct> structs;
  private final Map<String, Long> addresses;
  private final RuntimeTypes types;

  private TypeLayouts(Map<String, Struct> structs, Map<String, Long> addresses, RuntimeTypes types) {
    this.structs = structs;
    this.addresses = addresses;
    this.types = types;
  }

  /**
   * Reads the named struct types reachable from the itabs.
   *
   * @param types {@code [moduledata.types, moduledata.etypes)}
   * @param itablinks every itab's address
   * @param goMinor Go minor version (name encoding, field offset encoding)
   * @throws CorruptBinaryException a type points outside the type data
   */
  public static TypeLayouts read(ElfFile elf, long[] types, long[] itablinks, int goMinor) throws GoBinaryException {
    ByteBuffer data = elf.readAddress(types[0], types[1] - types[0]).order(ByteOrder.LITTLE_ENDIAN);
    RuntimeTypes names = new RuntimeTypes(elf, types, goMinor);
    Reader r = new Reader(elf, types[0], data, goMinor);
    ArrayDeque<Long> queue = new ArrayDeque<>();
    Set<Long> seen = new HashSet<>();
    for (long itab : itablinks) {
      ByteReader b = new ByteReader(elf.readAddress(itab, 16), "itab");
      queue.add(b.u64());
      queue.add(b.u64());
    }
    Map<String, Struct> structs = new HashMap<>();
    Map<Long, String> structNames = new HashMap<>();
    Map<Long, Long> pointerTo = new HashMap<>(); // pointee -> pointer type
    while (!queue.isEmpty() && seen.size() < MAX_TYPES) {
      long t = queue.poll();
      if (t == 0 || !seen.add(t) || !r.inTypes(t, 48)) {
        continue;
      }
      int kind = r.u8(t + 23) & KIND_MASK;
      switch (kind) {
        case KIND_ARRAY, KIND_CHAN, KIND_SLICE -> queue.add(r.u64(t + 48));
        case KIND_PTR -> {
          long elem = r.u64(t + 48);
          pointerTo.putIfAbsent(elem, t);
          queue.add(elem);
        }
        case KIND_MAP -> {
          queue.add(r.u64(t + 48));
          queue.add(r.u64(t + 56));
        }
        case KIND_STRUCT -> {
          long fields = r.u64(t + 56);
          long n = r.u64(t + 64);
          if (n < 0 || n > MAX_FIELDS) {
            throw new CorruptBinaryException(elf.path() + ": struct type with " + n + " fields");
          }
          Map<String, Long> out = new LinkedHashMap<>();
          Set<String> pointers = new HashSet<>();
          for (long i = 0; i < n; i++) {
            long f = fields + 24 * i;
            String name = r.name(r.u64(f));
            long typ = r.u64(f + 8);
            long word = r.u64(f + 16);
            if (out.putIfAbsent(name, goMinor >= 19 ? word : word >>> 1) == null && r.inTypes(typ, 48)
                && (r.u8(typ + 23) & KIND_MASK) == KIND_PTR) {
              pointers.add(name);
            }
            queue.add(typ);
          }
          if ((r.u8(t + 20) & TFLAG_NAMED) != 0) {
            String name = names.symbolTypeString(t);
            if (structs.putIfAbsent(name, new Struct(r.u64(t), Map.copyOf(out), Set.copyOf(pointers))) == null) {
              structNames.put(t, name);
            }
          }
        }
        default -> {
          // other kinds lead to no struct layout the probes read
        }
      }
    }
    Map<String, Long> addresses = new HashMap<>();
    for (Map.Entry<Long, String> e : structNames.entrySet()) {
      addresses.put(e.getValue(), e.getKey());
      Long ptr = pointerTo.get(e.getKey());
      if (ptr != null) {
        addresses.put("*" + e.getValue(), ptr);
      }
    }
    return new TypeLayouts(Map.copyOf(structs), Map.copyOf(addresses), names);
  }

  /**
   * The address of a named struct type's descriptor, or of the pointer type to one ({@code
   * *google.golang.org/grpc/internal/transport.http2Server}), among the types reached; empty when not
   * reached.
   */
  public java.util.Optional<Long> typeAddress(String symbolName) {
    return java.util.Optional.ofNullable(addresses.get(symbolName));
  }

  /** The reader of the runtime type descriptors these layouts were read with. */
  public RuntimeTypes types() {
    return types;
  }

  /**
   * Whether member {@code member} of the named struct {@code type} is a pointer.
   *
   * @return empty when the type is not known here or has no such member ({@link #memberOffset} tells which)
   */
  public java.util.Optional<Boolean> memberIsPointer(String type, String member) {
    Struct s = structs.get(type);
    if (s == null || !s.fields().containsKey(member)) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(s.pointers().contains(member));
  }

  /** The named struct, e.g. {@code net.TCPConn}; null when not reachable in this binary. */
  public Struct struct(String typeName) {
    return structs.get(typeName);
  }

  /** Number of named struct types found. */
  public int size() {
    return structs.size();
  }

  /**
   * Byte offset of a member path {@code [type, member, type, member, ...]} (each type the named struct
   * holding the next member), summed.
   *
   * @return empty when a type is not known here; {@code OptionalLong.empty()} inside when a type is
   *     known and lacks the member
   */
  public java.util.Optional<OptionalLong> memberOffset(java.util.List<String> path) {
    long sum = 0;
    for (int i = 0; i + 1 < path.size(); i += 2) {
      Struct s = structs.get(path.get(i));
      if (s == null) {
        return java.util.Optional.empty();
      }
      Long off = s.fields().get(path.get(i + 1));
      if (off == null) {
        return java.util.Optional.of(OptionalLong.empty());
      }
      sum += off;
    }
    return java.util.Optional.of(OptionalLong.of(sum));
  }

  private static final class Reader {
    private final ElfFile elf;
    private final long base;
    private final ByteBuffer data;
    private final boolean varintNames;

    Reader(ElfFile elf, long base, ByteBuffer data, int goMinor) {
      this.elf = elf;
      this.base = base;
      this.data = data;
      this.varintNames = goMinor >= 17;
    }

    boolean inTypes(long addr, int n) {
      long off = addr - base;
      return off >= 0 && off <= data.limit() - n;
    }

    long u64(long addr) throws CorruptBinaryException {
      if (inTypes(addr, 8)) {
        return data.getLong((int) (addr - base));
      }
      return elf.readAddress(addr, 8).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }

    int u8(long addr) throws CorruptBinaryException {
      if (inTypes(addr, 1)) {
        return data.get((int) (addr - base)) & 0xff;
      }
      return elf.readAddress(addr, 1).get(0) & 0xff;
    }

    String name(long addr) throws CorruptBinaryException {
      if (!inTypes(addr, 3)) {
        throw new CorruptBinaryException(elf.path() + ": field name at 0x" + Long.toHexString(addr) + " outside the type data");
      }
      int p = (int) (addr - base) + 1;
      long len;
      if (varintNames) {
        len = 0;
        int shift = 0;
        int b;
        do {
          if (p >= data.limit() || shift > 28) {
            throw new CorruptBinaryException(elf.path() + ": bad type name length");
          }
          b = data.get(p++) & 0xff;
          len |= (long) (b & 0x7f) << shift;
          shift += 7;
        } while ((b & 0x80) != 0);
      } else {
        len = (data.get(p) & 0xff) << 8 | data.get(p + 1) & 0xff;
        p += 2;
      }
      if (len > data.limit() - p) {
        throw new CorruptBinaryException(elf.path() + ": type name length " + len + " past the type data");
      }
      byte[] b = new byte[(int) len];
      data.get(p, b);
      return new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }
  }
}
