package io.gospan.receiver.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** OTLP payload compression, named as in {@code OTEL_EXPORTER_OTLP_COMPRESSION}. */
public enum Compression {
  NONE,
  GZIP;

  @JsonValue
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  @JsonCreator
  public static Compression fromConfig(String value) {
    for (Compression c : values()) {
      if (c.configName().equals(value)) {
        return c;
      }
    }
    throw new IllegalArgumentException("must be one of none, gzip (was '" + value + "')");
  }
}
