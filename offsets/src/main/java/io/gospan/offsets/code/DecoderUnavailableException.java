package io.gospan.offsets.code;

import io.gospan.offsets.GoBinaryException;

/**
 * The native instruction decoder cannot be used: {@code libcapstone.so.4} / {@code .so.5} is not installed
 * (Debian/Ubuntu package {@code libcapstone4} or {@code libcapstone5}), or its version has a memory layout
 * this binding does not know. Nothing about the inspected binary.
 */
public class DecoderUnavailableException extends GoBinaryException {
  private static final long serialVersionUID = 1L;

  public DecoderUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
