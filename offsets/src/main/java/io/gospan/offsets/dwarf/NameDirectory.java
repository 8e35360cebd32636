package io.gospan.offsets.dwarf;

import static io.gospan.offsets.dwarf.DwarfForms.*;

import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.elf.ByteReader;
import java.util.Arrays;

/**
 * Finds the DIE of a top-level function or type by its Go name. Go's linker writes one unit per package,
 * holding that package's functions, and every type in the unit named {@code runtime}
 * (src/cmd/link/internal/ld/dwarf.go, go1.16–go1.26); a lookup scans that unit first and every other unit
 * only when the name is not there. A scan keeps a 64-bit hash of each top-level subprogram and type name
 * ({@link NameIndex}), decoding only the DIEs that can carry such a name and stepping over the rest; a hit
 * is checked against the DIE's real name.
 */
final class NameDirectory {
  /** Go puts every type DIE in this unit (cmd/link, go1.16–go1.26). */
  private static final String TYPES_UNIT = "runtime";

  private final DebugInfo dies;
  private final NameIndex subprograms = new NameIndex();
  private final NameIndex types = new NameIndex();
  private final NameIndex structs = new NameIndex();
  private boolean allScanned;

  NameDirectory(DebugInfo dies) {
    this.dies = dies;
  }

  /** The out-of-line DW_TAG_subprogram (one with DW_AT_low_pc) of Go symbol {@code name}; -1 when absent. */
  int subprogram(String name) throws GoBinaryException {
    return find(subprograms, name, packageOf(name));
  }

  /** The type DIE (of any tag) named {@code name}; -1 when absent. */
  int type(String name) throws GoBinaryException {
    return find(types, name, TYPES_UNIT);
  }

  /** The DW_TAG_structure_type named {@code name} that is not a declaration; -1 when absent. */
  int struct(String name) throws GoBinaryException {
    return find(structs, name, TYPES_UNIT);
  }

  /**
   * The package path of a Go symbol name: up to the first dot after the last slash (slashes inside generic
   * brackets do not count), e.g. {@code google.golang.org/grpc/internal/transport} for
   * {@code google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader}.
   */
  static String packageOf(String symbol) {
    int bracket = symbol.indexOf('[');
    String head = bracket < 0 ? symbol : symbol.substring(0, bracket);
    int slash = head.lastIndexOf('/');
    int dot = head.indexOf('.', slash + 1);
    return dot < 0 ? head : head.substring(0, dot);
  }

  /**
   * The DIE named {@code name} in {@code index}: looked for in the unit {@code unitName} first, then in
   * every unit in {@code .debug_info} order; -1 when absent.
   */
  private int find(NameIndex index, String name, String unitName) throws GoBinaryException {
    Unit u = dies.unitNamed(unitName);
    if (u != null) {
      scan(u);
      int off = lookup(index, name);
      if (off >= 0) {
        return off;
      }
    }
    if (!allScanned) {
      for (Unit each : dies.units()) {
        scan(each);
      }
      allScanned = true;
    }
    return lookup(index, name);
  }

  /** Indexes the top-level subprograms and types of one unit. */
  private void scan(Unit u) throws GoBinaryException {
    if (u.scanned) {
      return;
    }
    u.scanned = true;
    ByteReader info = dies.info();
    IntList concreteByOrigin = new IntList();
    Die d = new Die();
    int diePos = u.dieStart;
    int depth = 0;
    boolean first = true;
    info.seek(diePos);
    while (diePos < u.end) {
      long code = info.uleb(); // the cursor is at diePos: after the unit header or the previous DIE
      if (code == 0) {
        diePos = info.position();
        if (--depth <= 0) {
          break;
        }
        continue;
      }
      Abbreviations.Abbrev a = dies.abbrev(u, code, diePos);
      if (!first && depth == 1 && a.indexed) {
        dies.readDie(diePos, u, d);
        index(d, concreteByOrigin);
        diePos = d.next;
        info.seek(diePos); // indexing may have read other DIEs or sections through the same cursor
      } else {
        dies.skipAttributes(a, u, diePos);
        diePos = info.position();
      }
      first = false;
      if (a.children) {
        depth++;
      } else if (depth == 0) {
        break; // a childless unit DIE
      }
    }
    // Out-of-line copies of inlined functions name themselves through DW_AT_abstract_origin.
    for (int k = 0; k < concreteByOrigin.size(); k += 2) {
      Die origin = dies.readDie(concreteByOrigin.get(k));
      int n = origin.find(AT_NAME);
      if (n >= 0) {
        subprograms.putIfAbsent(nameHash(origin, n), concreteByOrigin.get(k + 1));
      }
    }
  }

  private void index(Die d, IntList concreteByOrigin) throws GoBinaryException {
    int nameIdx = d.find(AT_NAME);
    if (d.tag == TAG_SUBPROGRAM) {
      boolean hasPc = d.find(AT_LOW_PC) >= 0;
      if (nameIdx >= 0) {
        if (hasPc) {
          subprograms.putIfAbsent(nameHash(d, nameIdx), d.offset);
        }
      } else if (hasPc) {
        int origin = d.find(AT_ABSTRACT_ORIGIN);
        if (origin >= 0) {
          concreteByOrigin.add(dies.reference(d, origin));
          concreteByOrigin.add(d.offset);
        }
      }
      return;
    }
    if (nameIdx < 0) {
      return;
    }
    long h = nameHash(d, nameIdx);
    types.putIfAbsent(h, d.offset);
    if (d.tag == TAG_STRUCTURE_TYPE) {
      int decl = d.find(AT_DECLARATION);
      if (decl < 0 || d.vals[decl] == 0) {
        structs.putIfAbsent(h, d.offset);
      }
    }
  }

  /** FNV-1a of a name attribute; inline strings are hashed in place. */
  private long nameHash(Die d, int i) throws GoBinaryException {
    if (d.forms[i] != FORM_STRING) {
      return NameIndex.hash(dies.string(d, i));
    }
    ByteReader info = dies.info();
    long h = NameIndex.FNV_OFFSET;
    int start = (int) d.vals[i];
    int end = start + d.lens[i];
    for (int k = start; k < end; k++) {
      h = (h ^ info.peek(k)) * NameIndex.FNV_PRIME;
    }
    return NameIndex.fix(h);
  }

  /** The DIE indexed under {@code name}, verified against its real name; -1 when absent. */
  private int lookup(NameIndex index, String name) throws GoBinaryException {
    int off = index.get(NameIndex.hash(name));
    if (off < 0) {
      return -1;
    }
    Die d = dies.readDie(off);
    int n = d.find(AT_NAME);
    if (n < 0) {
      int origin = d.find(AT_ABSTRACT_ORIGIN);
      if (origin < 0) {
        return -1;
      }
      d = dies.readDie(dies.reference(d, origin));
      n = d.find(AT_NAME);
    }
    return n >= 0 && dies.string(d, n).equals(name) ? off : -1; // a 64-bit hash collision reads as absent
  }

  /** A growable int array. */
  private static final class IntList {
    private int[] a = new int[64];
    private int n;

    void add(int v) {
      if (n == a.length) {
        a = Arrays.copyOf(a, n * 2);
      }
      a[n++] = v;
    }

    int get(int i) {
      return a[i];
    }

    int size() {
      return n;
    }
  }
}
