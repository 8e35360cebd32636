package io.gospan.offsets;

/** A structure inside the file (ELF header tables, a section, pclntab, build info, a DWARF unit) is truncated, points outside the file or contradicts itself. */
public class CorruptBinaryException extends GoBinaryException {
  private static final long serialVersionUID = 1L;

  public CorruptBinaryException(String message) {
    super(message);
  }

  public CorruptBinaryException(String message, Throwable cause) {
    super(message, cause);
  }
}
