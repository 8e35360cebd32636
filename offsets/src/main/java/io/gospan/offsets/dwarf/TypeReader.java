package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.DwarfForms.*;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.UnsupportedDwarfFormException;
import io.gospan.offsets.elf.ByteReader;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * Answers questions about type DIEs: a type's name and size, a struct's members and the offset of a member
 * path through nested struct values, and the facts Go's calling convention needs ({@link
 * GoRegisterAbi.Types}). Sizes are computed as Go's debug/dwarf {@code Type.Size()} does (go1.26): typedefs
 * take their target's size, arrays count × element size, pointers without DW_AT_byte_size the address size.
 * Chains of typedefs and nested types are followed at most {@value #MAX_TYPE_DEPTH} deep.
 */
final class TypeReader implements GoRegisterAbi.Types {
  private static final int MAX_TYPE_DEPTH = 64;

  private final DebugInfo dies;

  TypeReader(DebugInfo dies) {
    this.dies = dies;
  }

  /** DW_AT_name of the type at {@code typeOff}; "" when it has none. */
  String typeName(int typeOff) throws GoBinaryException {
    Die t = dies.readDie(typeOff);
    int n = t.find(AT_NAME);
    return n >= 0 ? dies.string(t, n) : "";
  }

  /** Size as Go's debug/dwarf Type.Size() computes it; -1 when unknown. */
  @Override
  public long size(int typeOff) throws GoBinaryException {
    return sizeOf(typeOff, 0);
  }

  private long sizeOf(int off, int depth) throws GoBinaryException {
    if (depth > MAX_TYPE_DEPTH) {
      return -1;
    }
    Die d = dies.readDie(off);
    switch (d.tag) {
      case TAG_TYPEDEF:
      case TAG_CONST_TYPE:
      case TAG_VOLATILE_TYPE:
      case TAG_RESTRICT_TYPE: {
        int t = d.find(AT_TYPE);
        return t < 0 ? (d.tag == TAG_TYPEDEF ? -1 : 0) : sizeOf(dies.reference(d, t), depth + 1);
      }
      case TAG_ARRAY_TYPE: {
        int t = d.find(AT_TYPE);
        if (t < 0) {
          return -1;
        }
        long count = arrayCount(d);
        if (count == -1) {
          return 0;
        }
        long elem = sizeOf(dies.reference(d, t), depth + 1);
        return count * elem;
      }
      default: {
        int b = d.find(AT_BYTE_SIZE);
        if (b >= 0) {
          return d.vals[b];
        }
        return d.tag == TAG_POINTER_TYPE ? d.unit.addrSize : -1;
      }
    }
  }

  @Override
  public long arrayCount(int arrayOff) throws GoBinaryException {
    return arrayCount(dies.readDie(arrayOff));
  }

  private long arrayCount(Die array) throws GoBinaryException {
    if (!array.children) {
      return -1;
    }
    int pos = array.next;
    Die c = new Die();
    while (true) {
      dies.readDie(pos, array.unit, c);
      pos = c.next;
      if (c.tag == 0) {
        return -1;
      }
      if (c.tag == TAG_SUBRANGE_TYPE) {
        int n = c.find(AT_COUNT);
        if (n >= 0) {
          return c.vals[n];
        }
        n = c.find(AT_UPPER_BOUND);
        return n >= 0 ? c.vals[n] + 1 : -1;
      }
      if (c.children) {
        return -1; // Go's array DIEs have only subrange children
      }
    }
  }

  @Override
  public int arrayElement(int arrayOff) throws GoBinaryException {
    Die a = dies.readDie(arrayOff);
    int t = a.find(AT_TYPE);
    return t < 0 ? -1 : dies.reference(a, t);
  }

  @Override
  public int[] goKind(int typeOff) throws GoBinaryException {
    for (int i = 0; i < MAX_TYPE_DEPTH; i++) {
      Die d = dies.readDie(typeOff);
      int k = d.find(AT_GO_KIND);
      if (k >= 0) {
        return new int[] {(int) d.vals[k], typeOff};
      }
      int t = d.find(AT_TYPE);
      if (d.tag != TAG_TYPEDEF || t < 0) {
        throw new UnsupportedDwarfFormException(dies.where() + ": type DIE at " + typeOff + " has no DW_AT_go_kind");
      }
      typeOff = dies.reference(d, t);
    }
    throw new CorruptBinaryException(dies.where() + ": typedef chain too deep at " + typeOff);
  }

  @Override
  public List<Integer> fieldTypes(int structOff) throws GoBinaryException {
    List<Integer> fields = new ArrayList<>();
    forEachMember(dies.readDie(structOff), (c, m) -> {
      fields.add(m.typeOffset);
      return false;
    });
    return fields;
  }

  /** The struct at {@code off} with every member, named {@code name}. */
  StructType struct(int off, String name) throws GoBinaryException {
    Die s = dies.readDie(off);
    int b = s.find(AT_BYTE_SIZE);
    long size = b >= 0 ? s.vals[b] : 0;
    List<Member> members = new ArrayList<>();
    forEachMember(s, (c, m) -> {
      int e = c.find(AT_GO_EMBEDDED_FIELD);
      boolean embedded = e >= 0 && c.vals[e] != 0;
      String tn = m.typeOffset >= 0 ? typeName(m.typeOffset) : "";
      long ts = m.typeOffset >= 0 ? size(m.typeOffset) : -1;
      members.add(new Member(m.name, m.offset, tn, ts, embedded));
      return false;
    });
    return new StructType(name, size, List.copyOf(members));
  }

  /**
   * Byte offset of the member at {@code path} of the struct at {@code structOff}: every segment but the
   * last must be a struct held by value (typedefs are followed, pointers are not).
   *
   * @return empty when a member is absent or a segment is not a struct value
   */
  OptionalLong memberOffset(int structOff, String[] path) throws GoBinaryException {
    long total = 0;
    for (int i = 0; i < path.length; i++) {
      MemberRef m = findMember(structOff, path[i]);
      if (m == null) {
        return OptionalLong.empty();
      }
      total += m.offset;
      if (i < path.length - 1) {
        int t = stripTypedefs(m.typeOffset);
        if (t < 0 || dies.readDie(t).tag != TAG_STRUCTURE_TYPE) {
          return OptionalLong.empty();
        }
        structOff = t;
      }
    }
    return OptionalLong.of(total);
  }

  private int stripTypedefs(int off) throws GoBinaryException {
    for (int i = 0; i < MAX_TYPE_DEPTH; i++) {
      Die d = dies.readDie(off);
      if (d.tag != TAG_TYPEDEF && d.tag != TAG_CONST_TYPE && d.tag != TAG_VOLATILE_TYPE
          && d.tag != TAG_RESTRICT_TYPE) {
        return off;
      }
      int t = d.find(AT_TYPE);
      if (t < 0) {
        return -1;
      }
      off = dies.reference(d, t);
    }
    return -1;
  }

  private record MemberRef(String name, long offset, int typeOffset) {}

  private MemberRef findMember(int structOff, String memberName) throws GoBinaryException {
    MemberRef[] found = new MemberRef[1];
    forEachMember(dies.readDie(structOff), (c, m) -> {
      if (m.name.equals(memberName)) {
        found[0] = m;
        return true;
      }
      return false;
    });
    return found[0];
  }

  private interface MemberVisitor {
    /** Returns true to stop. */
    boolean visit(Die member, MemberRef ref) throws GoBinaryException;
  }

  private void forEachMember(Die s, MemberVisitor v) throws GoBinaryException {
    dies.forEachChild(s, TAG_MEMBER, c -> {
      int n = c.find(AT_NAME);
      String name = n >= 0 ? dies.string(c, n) : "";
      int loc = c.find(AT_DATA_MEMBER_LOCATION);
      long offset = 0;
      if (loc >= 0) {
        if (isConstant(c.forms[loc])) {
          offset = c.vals[loc];
        } else if (isBlock(c.forms[loc])) {
          offset = memberLocationExpression(c, loc);
        }
      }
      int t = c.find(AT_TYPE);
      return v.visit(c, new MemberRef(name, offset, t >= 0 ? dies.reference(c, t) : -1));
    });
  }

  /** DWARF 2 style member location: {@code DW_OP_plus_uconst n}. */
  private long memberLocationExpression(Die c, int i) throws GoBinaryException {
    ByteReader r = dies.block(c, i, "member location");
    if (r.limit() > 0 && r.u8() == 0x23) {
      return r.uleb();
    }
    throw new UnsupportedDwarfFormException(dies.where() + ": member location expression of DIE at " + c.offset);
  }
}
