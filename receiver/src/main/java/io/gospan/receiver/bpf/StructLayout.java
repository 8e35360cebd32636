package io.gospan.receiver.bpf;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The Java description of one C struct shared with BPF programs: field names, offsets and
 * sizes, laid out in declaration order. The C headers under {@code bpf/} pad explicitly, so
 * the builder refuses a field that is not naturally aligned where it falls, rather than
 * inserting padding silently; a test checks every layout against the BTF of the built object.
 */
public final class StructLayout {

  /** One member: offset and size in bytes; {@code struct} set for a nested struct or array of them. */
  public record Field(String name, int offset, int size, StructLayout struct, int count) {}

  private final String name;
  private final int size;
  private final int alignment;
  private final Map<String, Field> fields;

  private StructLayout(String name, int size, int alignment, Map<String, Field> fields) {
    this.name = name;
    this.size = size;
    this.alignment = alignment;
    this.fields = Collections.unmodifiableMap(fields);
  }

  /** A builder for the C struct named {@code cName} (the name BTF knows it by). */
  public static Builder builder(String cName) {
    return new Builder(cName);
  }

  public String name() {
    return name;
  }

  /** sizeof, bytes. */
  public int size() {
    return size;
  }

  /** Alignment, bytes: that of the most aligned member. */
  public int alignment() {
    return alignment;
  }

  /** Members in declaration order. */
  public List<Field> fields() {
    return new ArrayList<>(fields.values());
  }

  /**
   * A member by name.
   *
   * @throws IllegalArgumentException when the struct has no such member
   */
  public Field field(String fieldName) {
    Field f = fields.get(fieldName);
    if (f == null) {
      throw new IllegalArgumentException("struct " + name + " has no field " + fieldName);
    }
    return f;
  }

  /** Offset of a member, bytes. */
  public int offset(String fieldName) {
    return field(fieldName).offset();
  }

  /** A zeroed little-endian buffer of {@link #size()} bytes. */
  public ByteBuffer allocate() {
    return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
  }

  @Override
  public String toString() {
    return "struct " + name + " (" + size + " bytes)";
  }

  /** Declares members in C order. */
  public static final class Builder {
    private final String name;
    private final Map<String, Field> fields = new LinkedHashMap<>();
    private int offset;
    private int alignment = 1;

    private Builder(String name) {
      this.name = Objects.requireNonNull(name);
    }

    public Builder u8(String field) {
      return scalar(field, 1);
    }

    public Builder u16(String field) {
      return scalar(field, 2);
    }

    public Builder u32(String field) {
      return scalar(field, 4);
    }

    public Builder s32(String field) {
      return scalar(field, 4);
    }

    public Builder u64(String field) {
      return scalar(field, 8);
    }

    /** A byte or char array ({@code __u8 x[n]}, {@code char x[n]}), alignment 1. */
    public Builder bytes(String field, int length) {
      return add(new Field(field, offset, length, null, length), 1);
    }

    /** A nested struct member. */
    public Builder struct(String field, StructLayout type) {
      return add(new Field(field, offset, type.size(), type, 1), type.alignment());
    }

    /** An array of structs. */
    public Builder array(String field, StructLayout type, int count) {
      return add(new Field(field, offset, type.size() * count, type, count), type.alignment());
    }

    private Builder scalar(String field, int bytes) {
      return add(new Field(field, offset, bytes, null, 1), bytes);
    }

    private Builder add(Field f, int align) {
      if (offset % align != 0) {
        throw new IllegalStateException(
            "struct " + name + "." + f.name() + " at offset " + offset + " is not " + align
                + "-aligned: declare the padding the C header has");
      }
      if (fields.putIfAbsent(f.name(), f) != null) {
        throw new IllegalStateException("struct " + name + " declares " + f.name() + " twice");
      }
      offset += f.size();
      alignment = Math.max(alignment, align);
      return this;
    }

    /**
     * Ends the struct.
     *
     * @param expectedSize the {@code _Static_assert}ed size of the C struct
     * @throws IllegalStateException when the members do not add up to it
     */
    public StructLayout build(int expectedSize) {
      if (offset % alignment != 0) {
        throw new IllegalStateException(
            "struct " + name + " ends at " + offset + ", not a multiple of its alignment " + alignment);
      }
      if (offset != expectedSize) {
        throw new IllegalStateException(
            "struct " + name + " members add up to " + offset + " bytes, expected " + expectedSize);
      }
      return new StructLayout(name, offset, alignment, fields);
    }
  }
}
