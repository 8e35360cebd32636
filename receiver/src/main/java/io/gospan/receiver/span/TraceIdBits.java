package io.gospan.receiver.span;

/**
 * A span whose trace id span assembly also holds as two numbers (the 16 bytes of the W3C trace id,
 * big-endian: the high and the low 8), so that what admits it to export does not decode the id's
 * 32 hex digits again.
 */
public interface TraceIdBits {
  /** The trace id's first 8 bytes (its first 16 hex digits) as a number. */
  long traceIdHigh();

  /** The trace id's last 8 bytes (its last 16 hex digits) as a number. */
  long traceIdLow();
}
