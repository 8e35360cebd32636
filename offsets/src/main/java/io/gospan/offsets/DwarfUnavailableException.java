package io.gospan.offsets;

/** The binary has no DWARF debug information (built with {@code -ldflags=-w}, or stripped); answers that need DWARF are not available and must come from the offsets catalog. */
public class DwarfUnavailableException extends GoBinaryException {
  private static final long serialVersionUID = 1L;

  public DwarfUnavailableException(String message) {
    super(message);
  }

  public DwarfUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
