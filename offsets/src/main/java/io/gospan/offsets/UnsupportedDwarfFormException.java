package io.gospan.offsets;

/** A DWARF construct the reader does not know: an attribute form code outside DWARF 2-5 (DWARF 5 section 7.5.6), an unsupported unit version, or a location operation Go does not emit. */
public class UnsupportedDwarfFormException extends CorruptBinaryException {
  private static final long serialVersionUID = 1L;

  public UnsupportedDwarfFormException(String message) {
    super(message);
  }

  public UnsupportedDwarfFormException(String message, Throwable cause) {
    super(message, cause);
  }
}
