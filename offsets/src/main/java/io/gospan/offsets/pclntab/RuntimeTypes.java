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

  private final ElfFile elf;
  private final long[] types;
  private final boolean varintNames;

  /**
   * @param types {@code [moduledata.types, moduledata.etypes)}
   * @param goMinor Go minor version from build info; selects the name encoding
   */
  public RuntimeTypes(ElfFile elf, long[] types, int goMinor) {
    this.elf = elf;
    this.types = types;
    this.varintNames = goMinor >= 17;
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
