package io.gospan.receiver.config;

import java.util.Locale;

/** The two signals gospan exports over OTLP, with their OTLP/HTTP paths (OTLP specification, "OTLP/HTTP Request"). */
public enum OtlpSignal {
  TRACES("/v1/traces"),
  METRICS("/v1/metrics");

  private final String httpPath;

  OtlpSignal(String httpPath) {
    this.httpPath = httpPath;
  }

  /** The path appended to a shared OTLP/HTTP base endpoint. */
  public String httpPath() {
    return httpPath;
  }

  /** {@code traces} / {@code metrics}: the config key under {@code exporter.otlp}. */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
