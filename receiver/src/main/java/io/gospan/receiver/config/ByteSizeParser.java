package io.gospan.receiver.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Byte sizes in the config file: a whole number of bytes ({@code 65536}) or one with a binary
 * unit: {@code 64KiB}, {@code 32MiB}, {@code 1GiB} (factors of 1024; {@code KB}/{@code MB}/{@code GB}
 * are read the same, as the JVM's {@code -Xmx} does).
 */
final class ByteSizeParser extends StdDeserializer<Long> {
  private static final long serialVersionUID = 1L;
  private static final Pattern SIZE = Pattern.compile("(\\d{1,12})\\s*(|B|KiB|KB|K|MiB|MB|M|GiB|GB|G)", Pattern.CASE_INSENSITIVE);

  ByteSizeParser() {
    super(Long.class);
  }

  /**
   * @throws IllegalArgumentException {@code text} is not a size
   */
  static long parse(String text) {
    Matcher m = SIZE.matcher(text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("'" + text + "' is not a size; write bytes or a number with a unit: 65536, 64KiB, 32MiB, 1GiB");
    }
    long n = Long.parseLong(m.group(1));
    int shift = switch (m.group(2).toUpperCase(java.util.Locale.ROOT)) {
      case "KIB", "KB", "K" -> 10;
      case "MIB", "MB", "M" -> 20;
      case "GIB", "GB", "G" -> 30;
      default -> 0;
    };
    return n << shift;
  }

  @Override
  public Long deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
    if (p.currentToken() == JsonToken.VALUE_STRING) {
      try {
        return parse(p.getText());
      } catch (IllegalArgumentException e) {
        return (Long) ctxt.handleWeirdStringValue(Long.class, p.getText(), e.getMessage());
      }
    }
    if (p.currentToken() == JsonToken.VALUE_NUMBER_INT) {
      return p.getLongValue();
    }
    return (Long) ctxt.handleUnexpectedToken(Long.class, p);
  }
}
