package io.gospan.offsets.code;

import io.gospan.offsets.CorruptBinaryException;

/**
 * Bytes inside a function are no valid x86-64 instruction (or the function's range is implausible): the
 * code is corrupt, not Go's, or was read from the wrong place. The message names the address, never the
 * bytes.
 */
public class UndecodableCodeException extends CorruptBinaryException {
  private static final long serialVersionUID = 1L;
  private final long address;

  public UndecodableCodeException(String message, long address) {
    super(message);
    this.address = address;
  }

  /** Virtual address of the first byte that could not be decoded (or of the function). */
  public long address() {
    return address;
  }
}
