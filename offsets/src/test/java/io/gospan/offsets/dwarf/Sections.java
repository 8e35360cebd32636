package io.gospan.offsets.dwarf;

import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.fuzz.FuzzImage;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Hand-made DWARF sections for the unit tests of the reader's parts: little-endian bytes, and an ELF holding them. */
final class Sections {
  private Sections() {}

  /** Little-endian bytes as the DWARF 5 standard (section 7) lays them out. */
  static final class Bytes {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    Bytes u8(int v) {
      out.write(v);
      return this;
    }

    Bytes u16(int v) {
      return u8(v & 0xff).u8(v >>> 8 & 0xff);
    }

    Bytes u32(long v) {
      return u16((int) (v & 0xffff)).u16((int) (v >>> 16 & 0xffff));
    }

    Bytes u64(long v) {
      return u32(v & 0xffffffffL).u32(v >>> 32);
    }

    Bytes uleb(long v) {
      do {
        int b = (int) (v & 0x7f);
        v >>>= 7;
        out.write(v != 0 ? b | 0x80 : b);
      } while (v != 0);
      return this;
    }

    int size() {
      return out.size();
    }

    byte[] toArray() {
      return out.toByteArray();
    }
  }

  /** An ELF image holding {@code sections}, as (kind, bytes) pairs. */
  static ElfFile elf(Object... kindsAndBytes) throws Exception {
    List<FuzzImage.Section> sections = new ArrayList<>();
    for (int i = 0; i < kindsAndBytes.length; i += 2) {
      sections.add(new FuzzImage.Section((FuzzImage.Kind) kindsAndBytes[i], false, (byte[]) kindsAndBytes[i + 1]));
    }
    return ElfFile.of(Path.of("test"), FuzzImage.elf(sections));
  }

  static Unit unit(int version, long lowPc) {
    Unit u = new Unit();
    u.version = version;
    u.addrSize = 8;
    u.offsetSize = 4;
    u.lowPc = lowPc;
    return u;
  }

  /** A DIE of unit {@code u} with the given (attribute, form, value) triples. */
  static Die die(Unit u, long[]... attributes) {
    Die d = new Die();
    d.unit = u;
    d.count = attributes.length;
    d.ensure(d.count);
    for (int i = 0; i < attributes.length; i++) {
      d.attrs[i] = (int) attributes[i][0];
      d.forms[i] = (int) attributes[i][1];
      d.vals[i] = attributes[i][2];
    }
    return d;
  }

  /** {@code .debug_addr} (DWARF 5 section 7.27): an 8-byte header, then {@code addresses}; the base is 8. */
  static byte[] addr(long... addresses) {
    Bytes b = new Bytes().u32(4 + 8L * addresses.length).u16(5).u8(8).u8(0);
    for (long a : addresses) {
      b.u64(a);
    }
    return b.toArray();
  }
}
