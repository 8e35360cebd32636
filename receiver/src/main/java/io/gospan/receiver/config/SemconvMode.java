package io.gospan.receiver.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * {@code semconv.rpc}: which generation of the OpenTelemetry RPC semantic conventions spans and
 * metrics carry. What each mode emits is decided once, in {@code span.RpcSemconv.Mode}, which the
 * pipeline maps this to.
 */
public enum SemconvMode {
  /** Current names: {@code rpc.system.name}, {@code rpc.method} = {@code pkg.Service/Method}, {@code rpc.response.status_code}. */
  STABLE,
  /** Names before semconv 1.38: {@code rpc.system}, {@code rpc.service}, {@code rpc.method}, {@code rpc.grpc.status_code}. */
  OLD,
  /** Both ({@code OTEL_SEMCONV_STABILITY_OPT_IN=rpc/dup}); where a key exists in both, the current value wins. */
  DUP;

  @JsonValue
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  @JsonCreator
  public static SemconvMode fromConfig(String value) {
    for (SemconvMode m : values()) {
      if (m.configName().equals(value)) {
        return m;
      }
    }
    throw new IllegalArgumentException("must be one of stable, old, dup (was '" + value + "')");
  }
}
