package io.gospan.offsets.pclntab;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.elf.ByteReader;
import io.gospan.offsets.elf.ElfFile;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Names itabs from Go's runtime type data, for binaries without {@code .symtab}.
 *
 * <p>Layouts (Go src/internal/abi/type.go and iface.go, go1.26; src/runtime/type.go before go1.21 — the same
 * offsets on 64-bit since go1.16): an itab starts with {@code inter *interfacetype} at 0 and {@code _type *_type}
 * at 8; a {@code _type} has {@code tflag uint8} at 20 and {@code str nameOff int32} at 40, an offset from
 * {@code moduledata.types}. A name is one flag byte then the length — a big-endian uint16 before go1.17, a
 * uvarint since — then the bytes. With {@code tflagExtraStar} (2) the stored string has a leading {@code *}
 * that is not part of this type's name.
 *
 * <p>Runtime type strings qualify names by package <em>name</em> ({@code *tls.Conn}); symbol names use the
 * import path ({@code *crypto/tls.Conn}). {@link #symbolTypeString} restores the path: for a pointer
 * ({@code kind} 22) or struct (25) with {@code tflagUncommon} (1), from the {@code uncommontype} that follows
 * the kind-specific part (at 56 for {@code ptrtype}, 80 for {@code structtype}; its first field is the
 * package path nameOff); for an interface (20), from {@code interfacetype.pkgpath} (a name pointer at 48).
 */
public final class RuntimeTypes {
  private static final int TFLAG_UNCOMMON = 1;
  private static final int TFLAG_EXTRA_STAR = 2;
  private static final int KIND_MASK = 0x1f;
  private static final int KIND_INTERFACE = 20;
  private static final int KIND_PTR = 22;
  private static final int KIND_STRUCT = 25;
  private static final int PTRTYPE_SIZE = 56;
  private static final int STRUCTTYPE_SIZE = 80;
  private static final int INTERFACETYPE_PKGPATH = 48;

  private static final int KIND_ARRAY = 17;
  private static final int KIND_CHAN = 18;
  private static final int KIND_SLICE = 23;
  private static final int KIND_FUNC = 19;
  private static final int FUNCTYPE_SIZE = 56;
  private static final int UNCOMMONTYPE_SIZE = 16;
  private static final int STRUCT_FIELDS = 56;
  private static final int STRUCT_FIELD_SIZE = 24;
  private static final int INTERFACE_METHODS = 56;
  private static final int NAME_EMBEDDED = 1 << 3;
  private static final int MAX_FIELDS = 1 << 16;

  /** {@code abi.Kind}: the low 5 bits of {@code _type.kind} (Go src/internal/abi/type.go). */
  public static final int KIND_INTERFACE_VALUE = KIND_INTERFACE;
  /** {@code abi.Pointer}. */
  public static final int KIND_POINTER = KIND_PTR;
  /** {@code abi.Struct}. */
  public static final int KIND_STRUCT_VALUE = KIND_STRUCT;

  /**
   * One field of a struct type (Go src/internal/abi/type.go {@code StructField}).
   *
   * @param name the field's name (an embedded field is named by its type)
   * @param offset bytes from the start of the struct
   * @param type the address of the field's {@code _type}
   * @param embedded whether the field is embedded
   */
  public record Field(String name, long offset, long type, boolean embedded) {}

  private final ElfFile elf;
  private final long[] types;
  private final boolean varintNames;
  private final boolean offsetAnon;

  /**
   * @param types {@code [moduledata.types, moduledata.etypes)}
   * @param goMinor Go minor version from build info; selects the name encoding
   */
  public RuntimeTypes(ElfFile elf, long[] types, int goMinor) {
    this.elf = elf;
    this.types = types;
    this.varintNames = goMinor >= 17;
    this.offsetAnon = goMinor < 19;
  }

  /** {@code _type.kind & kindMask}: {@link #KIND_POINTER}, {@link #KIND_STRUCT_VALUE}, ... */
  public int kind(long typeAddr) throws GoBinaryException {
    return new ByteReader(elf.readAddress(typeAddr + 23, 1), "runtime type").u8() & KIND_MASK;
  }

  /** {@code _type.size}, bytes. */
  public long size(long typeAddr) throws GoBinaryException {
    return new ByteReader(elf.readAddress(typeAddr, 8), "runtime type").u64();
  }

  /** {@code _type.ptrdata} ({@code PtrBytes}): the prefix of the type that holds pointers, bytes. */
  public long ptrBytes(long typeAddr) throws GoBinaryException {
    return new ByteReader(elf.readAddress(typeAddr + 8, 8), "runtime type").u64();
  }

  /**
   * The element type of a pointer, slice, array or channel type (the word after the 48-byte {@code
   * _type}).
   *
   * @throws CorruptBinaryException the type is of another kind, or lies outside the file
   */
  public long elem(long typeAddr) throws GoBinaryException {
    int kind = kind(typeAddr);
    if (kind != KIND_PTR && kind != KIND_SLICE && kind != KIND_ARRAY && kind != KIND_CHAN) {
      throw new CorruptBinaryException(elf.path() + ": runtime type of kind " + kind + " has no element type");
    }
    return new ByteReader(elf.readAddress(typeAddr + 48, 8), "runtime type").u64();
  }

  /**
   * The fields of a struct type, in declaration order ({@code structtype.fields}; a field's offset word is
   * {@code offset << 1 | embedded} before go1.19, the plain offset since, the embedded flag then in the
   * name's flag byte, bit 3).
   *
   * @throws CorruptBinaryException not a struct type, or its fields lie outside the file
   */
  public java.util.List<Field> structFields(long typeAddr) throws GoBinaryException {
    if (kind(typeAddr) != KIND_STRUCT) {
      throw new CorruptBinaryException(elf.path() + ": runtime type at 0x" + Long.toHexString(typeAddr) + " is not a struct");
    }
    ByteReader st = new ByteReader(elf.readAddress(typeAddr + STRUCT_FIELDS, 16), "structtype");
    long fields = st.u64();
    long n = st.u64();
    if (n < 0 || n > MAX_FIELDS) {
      throw new CorruptBinaryException(elf.path() + ": struct type with " + n + " fields");
    }
    java.util.List<Field> out = new java.util.ArrayList<>((int) n);
    if (n == 0) {
      return out;
    }
    ByteReader f = new ByteReader(elf.readAddress(fields, n * STRUCT_FIELD_SIZE), "struct fields");
    for (int i = 0; i < n; i++) {
      long namePtr = f.u64();
      long type = f.u64();
      long word = f.u64();
      int flags = new ByteReader(elf.readAddress(namePtr, 1), "field name").u8();
      boolean embedded = offsetAnon ? (word & 1) != 0 : (flags & NAME_EMBEDDED) != 0;
      out.add(new Field(name(namePtr), offsetAnon ? word >>> 1 : word, type, embedded));
    }
    return out;
  }

  /**
   * The method names of an interface type ({@code interfacetype.methods}: each {@code imethod} a name and a
   * type offset from {@code moduledata.types}), sorted as Go sorts them.
   *
   * @throws CorruptBinaryException not an interface type, or its methods lie outside the file
   */
  public java.util.List<String> interfaceMethods(long typeAddr) throws GoBinaryException {
    if (kind(typeAddr) != KIND_INTERFACE) {
      throw new CorruptBinaryException(elf.path() + ": runtime type at 0x" + Long.toHexString(typeAddr) + " is not an interface");
    }
    ByteReader it = new ByteReader(elf.readAddress(typeAddr + INTERFACE_METHODS, 16), "interfacetype");
    long methods = it.u64();
    long n = it.u64();
    if (n < 0 || n > MAX_FIELDS) {
      throw new CorruptBinaryException(elf.path() + ": interface type with " + n + " methods");
    }
    java.util.List<String> out = new java.util.ArrayList<>((int) n);
    if (n == 0) {
      return out;
    }
    ByteReader m = new ByteReader(elf.readAddress(methods, n * 8), "interface methods");
    for (int i = 0; i < n; i++) {
      int nameOff = m.s32();
      m.s32();
      out.add(name(types[0] + nameOff));
    }
    return out;
  }

  /**
   * One method of a named type's method table ({@code uncommontype}'s methods, Go src/internal/abi/type.go
   * {@code Method}: name, {@code mtyp} the method's func type without its receiver, {@code ifn}, {@code tfn}).
   *
   * @param name the method's name
   * @param funcType the address of its func type; 0 when the linker dropped it ({@code mtyp} -1: the type is
   *     not otherwise reachable, which is the case of most unexported methods never called through an
   *     interface)
   */
  public record Method(String name, long funcType) {}

  /**
   * The method table of a pointer or struct type with {@code tflagUncommon} ({@code uncommontype} after the
   * kind-specific part: {@code pkgpath nameOff}, {@code mcount uint16}, {@code xcount uint16}, {@code moff
   * uint32}; {@code mcount} methods of 16 bytes at {@code moff} from it); empty for other types.
   *
   * @throws CorruptBinaryException the table lies outside the file
   */
  public java.util.List<Method> methods(long typeAddr) throws GoBinaryException {
    ByteReader t = new ByteReader(elf.readAddress(typeAddr, 48), "runtime type");
    t.seek(20);
    int tflag = t.u8();
    t.seek(23);
    int kind = t.u8() & KIND_MASK;
    if ((tflag & TFLAG_UNCOMMON) == 0 || (kind != KIND_PTR && kind != KIND_STRUCT)) {
      return java.util.List.of();
    }
    long uncommon = typeAddr + (kind == KIND_PTR ? PTRTYPE_SIZE : STRUCTTYPE_SIZE);
    ByteReader u = new ByteReader(elf.readAddress(uncommon, 16), "uncommontype");
    u.s32();
    int mcount = u.u16();
    u.u16();
    long moff = u.u32();
    java.util.List<Method> out = new java.util.ArrayList<>(mcount);
    if (mcount == 0) {
      return out;
    }
    ByteReader m = new ByteReader(elf.readAddress(uncommon + moff, 16L * mcount), "methods");
    for (int i = 0; i < mcount; i++) {
      int nameOff = m.s32();
      int mtyp = m.s32();
      m.s32();
      m.s32();
      long ft = mtyp == -1 || mtyp == 0 ? 0 : types[0] + mtyp;
      if (ft != 0 && (Long.compareUnsigned(ft, types[0]) < 0 || Long.compareUnsigned(ft, types[1]) >= 0)) {
        throw new CorruptBinaryException(elf.path() + ": method type at 0x" + Long.toHexString(ft) + " outside the type data");
      }
      out.add(new Method(name(types[0] + nameOff), ft));
    }
    return out;
  }

  /**
   * The parameter and result types of a func type ({@code functype}: {@code inCount uint16} at 48, {@code
   * outCount uint16} at 50 with the variadic flag in its top bit; the type pointers after the 56-byte {@code
   * functype} and its {@code uncommontype}, when it has one).
   *
   * @return {@code [ins, outs]}, each the addresses of the types in order
   * @throws CorruptBinaryException not a func type, or its parameters lie outside the file
   */
  public long[][] funcParams(long typeAddr) throws GoBinaryException {
    if (kind(typeAddr) != KIND_FUNC) {
      throw new CorruptBinaryException(elf.path() + ": runtime type at 0x" + Long.toHexString(typeAddr) + " is not a func");
    }
    ByteReader t = new ByteReader(elf.readAddress(typeAddr, FUNCTYPE_SIZE), "functype");
    t.seek(20);
    int tflag = t.u8();
    t.seek(48);
    int in = t.u16();
    int out = t.u16() & 0x7fff;
    long base = typeAddr + FUNCTYPE_SIZE + ((tflag & TFLAG_UNCOMMON) != 0 ? UNCOMMONTYPE_SIZE : 0);
    ByteReader p = new ByteReader(elf.readAddress(base, 8L * (in + out)), "func params");
    long[][] r = {new long[in], new long[out]};
    for (int i = 0; i < in + out; i++) {
      r[i < in ? 0 : 1][i < in ? i : i - in] = p.u64();
    }
    return r;
  }

  /** An array type's length ({@code arraytype.len} at 64). */
  public long arrayLength(long typeAddr) throws GoBinaryException {
    if (kind(typeAddr) != KIND_ARRAY) {
      throw new CorruptBinaryException(elf.path() + ": runtime type at 0x" + Long.toHexString(typeAddr) + " is not an array");
    }
    return new ByteReader(elf.readAddress(typeAddr + 64, 8), "arraytype").u64();
  }

  /** {@code [moduledata.types, moduledata.etypes)}. */
  public long[] typeRange() {
    return types.clone();
  }

  /**
   * The Go type string of the {@code _type} at {@code typeAddr}, e.g. {@code *net.TCPConn}.
   *
   * @throws CorruptBinaryException the type or its name lies outside the file
   */
  public String typeString(long typeAddr) throws GoBinaryException {
    ByteReader t = new ByteReader(elf.readAddress(typeAddr, 48), "runtime type");
    t.seek(20);
    int tflag = t.u8();
    t.seek(40);
    String s = name(types[0] + t.s32());
    return (tflag & TFLAG_EXTRA_STAR) != 0 && s.startsWith("*") ? s.substring(1) : s;
  }

  /**
   * The type as spelled in symbol names, with the package import path: {@code *crypto/tls.Conn} for the
   * runtime's {@code *tls.Conn}. Falls back to {@link #typeString} when the type records no package path.
   */
  public String symbolTypeString(long typeAddr) throws GoBinaryException {
    String s = typeString(typeAddr);
    ByteReader t = new ByteReader(elf.readAddress(typeAddr, 48), "runtime type");
    t.seek(20);
    int tflag = t.u8();
    t.seek(23);
    int kind = t.u8() & KIND_MASK;
    String pkg = "";
    if (kind == KIND_INTERFACE) {
      long ptr = new ByteReader(elf.readAddress(typeAddr + INTERFACETYPE_PKGPATH, 8), "interfacetype").u64();
      pkg = ptr == 0 ? "" : name(ptr);
    } else if ((tflag & TFLAG_UNCOMMON) != 0 && (kind == KIND_PTR || kind == KIND_STRUCT)) {
      long uncommon = typeAddr + (kind == KIND_PTR ? PTRTYPE_SIZE : STRUCTTYPE_SIZE);
      int off = new ByteReader(elf.readAddress(uncommon, 4), "uncommontype").s32();
      pkg = off == 0 ? "" : name(types[0] + off);
    }
    if (pkg.isEmpty()) {
      return s;
    }
    String star = s.startsWith("*") ? "*" : "";
    String rest = s.substring(star.length());
    int dot = rest.indexOf('.');
    return dot < 0 ? s : star + pkg + rest.substring(dot);
  }

  private String name(long nameAddr) throws GoBinaryException {
    if (Long.compareUnsigned(nameAddr, types[0]) < 0 || Long.compareUnsigned(nameAddr, types[1]) >= 0) {
      throw new CorruptBinaryException(elf.path() + ": type name at 0x" + Long.toHexString(nameAddr)
          + " outside the type data");
    }
    long avail = Math.min(types[1] - nameAddr, (1 << 16) + 16);
    ByteReader n = new ByteReader(elf.readAddress(nameAddr, avail), "runtime type name");
    n.u8();
    long len = varintNames ? n.uleb() : ((long) n.u8() << 8 | n.u8());
    if (len < 0 || len > n.remaining()) {
      throw new CorruptBinaryException(elf.path() + ": type name length " + len + " past the type data");
    }
    return n.string(n.position(), (int) len);
  }

  /**
   * Names every itab of {@code itablinks} as {@code "<concrete type>,<interface type>"} in symbol spelling
   * (the part after {@code go:itab.} in the symbol name) and keeps those {@code wanted} accepts.
   *
   * @return itab address by name, e.g. {@code "*net.TCPConn,net.Conn" -> 0xa2c1b8}
   */
  public Map<String, Long> nameItabs(long[] itablinks, java.util.function.Predicate<String> wanted)
      throws GoBinaryException {
    Map<String, Long> out = new LinkedHashMap<>();
    for (long itab : itablinks) {
      ByteReader r = new ByteReader(elf.readAddress(itab, 16), "itab");
      long inter = r.u64();
      long type = r.u64();
      String name = symbolTypeString(type) + "," + symbolTypeString(inter);
      if (wanted.test(name)) {
        out.putIfAbsent(name, itab);
      }
    }
    return out;
  }

  /** Convenience for a single pair. */
  public Optional<Long> itab(long[] itablinks, String concreteType, String interfaceType) throws GoBinaryException {
    String key = concreteType + "," + interfaceType;
    return Optional.ofNullable(nameItabs(itablinks, key::equals).get(key));
  }
}
