package io.gospan.receiver.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** Span exporter kinds. */
public enum ExporterType {
  OTLP,
  CONSOLE,
  FILE,
  NONE;

  @JsonValue
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  @JsonCreator
  public static ExporterType fromConfig(String value) {
    for (ExporterType t : values()) {
      if (t.configName().equals(value)) {
        return t;
      }
    }
    throw new IllegalArgumentException("must be one of otlp, console, file, none (was '" + value + "')");
  }
}
