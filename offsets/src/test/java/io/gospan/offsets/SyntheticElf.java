package io.gospan.offsets;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** Builds small in-memory ELF64 x86-64 images with chosen sections, for error-path tests. */
final class SyntheticElf {
  private final Map<String, byte[]> sections = new LinkedHashMap<>();
  private final Map<String, Long> flags = new LinkedHashMap<>();

  SyntheticElf section(String name, byte[] data) {
    return section(name, data, 0);
  }

  SyntheticElf section(String name, byte[] data, long shFlags) {
    sections.put(name, data);
    flags.put(name, shFlags);
    return this;
  }

  ByteBuffer build() {
    ByteArrayOutputStream shstr = new ByteArrayOutputStream();
    shstr.write(0);
    Map<String, Integer> nameOff = new LinkedHashMap<>();
    for (String n : sections.keySet()) {
      nameOff.put(n, shstr.size());
      shstr.writeBytes(n.getBytes(StandardCharsets.UTF_8));
      shstr.write(0);
    }
    nameOff.put(".shstrtab", shstr.size());
    shstr.writeBytes(".shstrtab\0".getBytes(StandardCharsets.UTF_8));
    byte[] shstrtab = shstr.toByteArray();

    int dataSize = shstrtab.length;
    for (byte[] d : sections.values()) {
      dataSize += d.length;
    }
    int shnum = sections.size() + 2;
    int shoff = 64 + dataSize;
    ByteBuffer b = ByteBuffer.allocate(shoff + 64 * shnum).order(ByteOrder.LITTLE_ENDIAN);
    b.put(new byte[] {0x7f, 'E', 'L', 'F', 2, 1, 1});
    b.putShort(0x10, (short) 2).putShort(0x12, (short) 62).putInt(0x14, 1);
    b.putLong(0x28, shoff).putShort(0x34, (short) 64).putShort(0x36, (short) 56);
    b.putShort(0x3a, (short) 64).putShort(0x3c, (short) shnum).putShort(0x3e, (short) (shnum - 1));
    int off = 64;
    int idx = 1;
    for (Map.Entry<String, byte[]> e : sections.entrySet()) {
      b.put(off, e.getValue());
      header(b, shoff + 64 * idx, nameOff.get(e.getKey()), flags.get(e.getKey()), off, e.getValue().length);
      off += e.getValue().length;
      idx++;
    }
    b.put(off, shstrtab);
    header(b, shoff + 64 * idx, nameOff.get(".shstrtab"), 0, off, shstrtab.length);
    b.position(0);
    return b;
  }

  private static void header(ByteBuffer b, int at, int name, long flags, long offset, long size) {
    b.putInt(at, name).putInt(at + 4, 1).putLong(at + 8, flags).putLong(at + 24, offset).putLong(at + 32, size);
  }

  static byte[] bytes(int... v) {
    byte[] b = new byte[v.length];
    for (int i = 0; i < v.length; i++) {
      b[i] = (byte) v[i];
    }
    return b;
  }
}
