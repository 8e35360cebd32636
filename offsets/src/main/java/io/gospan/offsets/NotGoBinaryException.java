package io.gospan.offsets;

/** The file is an x86-64 ELF but carries neither Go build info (.go.buildinfo) nor a Go pclntab (.gopclntab). */
public class NotGoBinaryException extends GoBinaryException {
  private static final long serialVersionUID = 1L;

  public NotGoBinaryException(String message) {
    super(message);
  }

  public NotGoBinaryException(String message, Throwable cause) {
    super(message, cause);
  }
}
