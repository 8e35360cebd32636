package io.gospan.receiver.event;

import java.util.Objects;

/**
 * One HPACK header field as captured by BPF.
 *
 * @param name lower-case field name, e.g. {@code :path}, {@code grpc-status}
 * @param value the value, possibly cut short by the capture buffer
 * @param truncated the value was longer than the BPF buffer and {@code value} is a prefix
 */
public record HeaderField(String name, String value, boolean truncated) {
  public HeaderField {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
  }

  public static HeaderField of(String name, String value) {
    return new HeaderField(name, value, false);
  }

  /** Name and value, except that a credential's value ({@link HeaderPolicy#isCredential}) is never shown. */
  @Override
  public String toString() {
    return "HeaderField[" + name + "=" + (HeaderPolicy.isCredential(name) ? "<redacted>" : value)
        + (truncated ? ", truncated" : "") + "]";
  }
}
