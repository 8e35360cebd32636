package io.gospan.receiver.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import io.opentelemetry.sdk.autoconfigure.spi.internal.DefaultConfigProperties;
import java.io.IOException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Map;

/**
 * Durations in the config file: a number with a unit, read by the SDK's {@code
 * ConfigProperties.getDuration} (the grammar of the {@code OTEL_*} duration variables): {@code
 * 500us}, {@code 250ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 1d} (also {@code ns}); or
 * ISO-8601 {@code PT30S}. Unlike the variables, a unit is required: a bare {@code 30} is refused
 * rather than read as milliseconds, and so is a negative number.
 */
final class DurationParser extends StdDeserializer<Duration> {
  private static final long serialVersionUID = 1L;
  private static final String PROPERTY = "duration";

  DurationParser() {
    super(Duration.class);
  }

  /**
   * @throws IllegalArgumentException {@code text} is not a duration
   */
  static Duration parse(String text) {
    String t = text.trim();
    if (t.startsWith("P") || t.startsWith("p")) {
      try {
        return Duration.parse(t);
      } catch (DateTimeParseException e) {
        throw notADuration(text);
      }
    }
    if (t.isEmpty() || t.startsWith("-") || Character.isDigit(t.charAt(t.length() - 1))) {
      throw notADuration(text); // no unit (the SDK would read milliseconds), or negative
    }
    try {
      return DefaultConfigProperties.createFromMap(Map.of(PROPERTY, t)).getDuration(PROPERTY);
    } catch (ConfigurationException e) {
      throw notADuration(text);
    }
  }

  private static IllegalArgumentException notADuration(String text) {
    return new IllegalArgumentException(
        "'" + text + "' is not a duration; write a number with a unit: 250ms, 30s, 5m, 1h");
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
