package io.gospan.receiver.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import java.io.IOException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations in the config file: {@code 250ms}, {@code 30s}, {@code 5m}, {@code 1h}, or ISO-8601 {@code PT30S}. */
final class DurationParser extends StdDeserializer<Duration> {
  private static final long serialVersionUID = 1L;
  private static final Pattern SIMPLE = Pattern.compile("(\\d+)\\s*(ms|s|m|h)");

  DurationParser() {
    super(Duration.class);
  }

  static Duration parse(String text) {
    String t = text.trim();
    Matcher m = SIMPLE.matcher(t);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        default -> Duration.ofHours(n);
      };
    }
    try {
      return Duration.parse(t);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a duration; write a number with a unit: 250ms, 30s, 5m, 1h");
    }
  }

  @Override
  public Duration deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
    if (p.currentToken() == JsonToken.VALUE_STRING) {
      try {
        return parse(p.getText());
      } catch (IllegalArgumentException e) {
        return (Duration) ctxt.handleWeirdStringValue(Duration.class, p.getText(), e.getMessage());
      }
    }
    if (p.currentToken().isNumeric()) {
      return (Duration)
          ctxt.handleWeirdNumberValue(
              Duration.class, p.getNumberValue(), "a duration needs a unit, e.g. 30s or 500ms");
    }
    return (Duration) ctxt.handleUnexpectedToken(Duration.class, p);
  }
}
