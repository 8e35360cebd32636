package io.gospan.offsets;

import java.io.IOException;

/**
 * Base of every error the inspector reports about the content of a file: the file is not what a probe
 * needs (not ELF, not x86-64, not Go), or a part of it is truncated, corrupt or absent. Plain I/O failures
 * (file missing, unreadable) stay {@link IOException}s.
 *
 * <p>Queries on a {@link GoBinary} throw only subclasses of this type; a corrupt file never surfaces as a
 * runtime exception.
 */
public class GoBinaryException extends IOException {
  private static final long serialVersionUID = 1L;

  public GoBinaryException(String message) {
    super(message);
  }

  public GoBinaryException(String message, Throwable cause) {
    super(message, cause);
  }
}
