package io.gospan.receiver.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * {@code sampling.sampler} ({@code OTEL_TRACES_SAMPLER}): which of the OpenTelemetry SDK's
 * samplers decides whether a trace is exported, by the names the specification gives them
 * ("General SDK Configuration", {@code OTEL_TRACES_SAMPLER}). The pipeline builds the SDK's own
 * {@code Sampler} from it; {@code jaeger_remote} and {@code xray} are not offered.
 */
public enum SamplerName {
  /** Every trace (the default). */
  ALWAYS_ON,
  /** No trace; RED metrics still count every call. */
  ALWAYS_OFF,
  /** A fraction {@code sampling.ratio} of traces, by trace id. */
  TRACEIDRATIO,
  /** The parent's sampled flag; a root: every trace. */
  PARENTBASED_ALWAYS_ON,
  /** The parent's sampled flag; a root: none. */
  PARENTBASED_ALWAYS_OFF,
  /** The parent's sampled flag; a root: a fraction {@code sampling.ratio}, by trace id. */
  PARENTBASED_TRACEIDRATIO;

  @JsonValue
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  @JsonCreator
  public static SamplerName fromConfig(String value) {
    for (SamplerName s : values()) {
      if (s.configName().equals(value)) {
        return s;
      }
    }
    throw new IllegalArgumentException("must be one of "
        + Arrays.stream(values()).map(SamplerName::configName).collect(Collectors.joining(", "))
        + " (was '" + ConfigLoader.printable(String.valueOf(value)) + "')");
  }
}
