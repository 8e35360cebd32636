package io.gospan.offsets;

/** The file does not start with the ELF magic (7f 45 4c 46) or its ELF header is incomplete. */
public class NotElfException extends GoBinaryException {
  private static final long serialVersionUID = 1L;

  public NotElfException(String message) {
    super(message);
  }

  public NotElfException(String message, Throwable cause) {
    super(message, cause);
  }
}
