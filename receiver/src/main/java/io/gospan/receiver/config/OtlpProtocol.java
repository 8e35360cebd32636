package io.gospan.receiver.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** OTLP transports, named as in {@code OTEL_EXPORTER_OTLP_PROTOCOL}. */
public enum OtlpProtocol {
  GRPC("grpc"),
  HTTP_PROTOBUF("http/protobuf");

  private final String configName;

  OtlpProtocol(String configName) {
    this.configName = configName;
  }

  @JsonValue
  public String configName() {
    return configName;
  }

  @JsonCreator
  public static OtlpProtocol fromConfig(String value) {
    for (OtlpProtocol p : values()) {
      if (p.configName.equals(value)) {
        return p;
      }
    }
    throw new IllegalArgumentException("must be one of grpc, http/protobuf (was '" + value + "')");
  }
}
