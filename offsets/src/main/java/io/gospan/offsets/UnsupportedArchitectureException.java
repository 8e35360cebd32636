package io.gospan.offsets;

/** The file is ELF but not a 64-bit little-endian x86-64 (EM_X86_64 = 62) object. */
public class UnsupportedArchitectureException extends GoBinaryException {
  private static final long serialVersionUID = 1L;

  public UnsupportedArchitectureException(String message) {
    super(message);
  }

  public UnsupportedArchitectureException(String message, Throwable cause) {
    super(message, cause);
  }
}
