package io.gospan.receiver.span;

import io.gospan.receiver.event.Side;
import io.grpc.Status;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The mapping of a gRPC call to the OpenTelemetry RPC semantic conventions, for spans and for the
 * RED metrics alike, in one of three {@link Mode}s.
 *
 * <ul>
 *   <li>Stable (semconv 1.38 and later): {@code rpc.system.name=grpc}, {@code rpc.method} = {@code
 *       pkg.Service/Method} ({@code _OTHER} when unknown), {@code rpc.response.status_code} = the
 *       status name, {@code error.type} = the status name when the status is an error for that side
 *       ({@link GrpcStatus#isError}); metadata as {@code rpc.request.metadata.<name>} / {@code
 *       rpc.response.metadata.<name>}; durations {@code rpc.server.call.duration} / {@code
 *       rpc.client.call.duration} in seconds.
 *   <li>Old (up to semconv 1.37): {@code rpc.system=grpc}, {@code rpc.service} = {@code
 *       pkg.Service}, {@code rpc.method} = {@code Method}, {@code rpc.grpc.status_code} = the
 *       numeric code; metadata as {@code rpc.grpc.request.metadata.<name>} / {@code
 *       rpc.grpc.response.metadata.<name>}; durations {@code rpc.server.duration} / {@code
 *       rpc.client.duration} in milliseconds.
 *   <li>Dup ({@code OTEL_SEMCONV_STABILITY_OPT_IN=rpc/dup}): both; on a span, where a key exists in
 *       both ({@code rpc.method}) the stable value wins.
 * </ul>
 */
public final class RpcSemconv {

  /** Which generation of the conventions to emit. */
  public enum Mode {
    STABLE,
    OLD,
    DUP;

    public boolean emitStable() {
      return this != OLD;
    }

    public boolean emitOld() {
      return this != STABLE;
    }
  }

  /** Histogram names and units of the RED metrics, by generation. */
  public static final String SERVER_CALL_DURATION = "rpc.server.call.duration";
  public static final String CLIENT_CALL_DURATION = "rpc.client.call.duration";
  /** Unit of the stable histograms: seconds. */
  public static final String STABLE_UNIT = "s";
  public static final String OLD_SERVER_DURATION = "rpc.server.duration";
  public static final String OLD_CLIENT_DURATION = "rpc.client.duration";
  /** Unit of the old histograms: milliseconds. */
  public static final String OLD_UNIT = "ms";

  private final Mode mode;

  private RpcSemconv(Mode mode) {
    this.mode = Objects.requireNonNull(mode, "mode");
  }

  public static RpcSemconv of(Mode mode) {
    return new RpcSemconv(mode);
  }

  public Mode mode() {
    return mode;
  }

  /**
   * Puts a span's call attributes: system, method (and service), and the status when the end was
   * seen.
   *
   * @param fullMethod {@code pkg.Service/Method}, or {@code null} when unknown
   * @param status {@code null} when the stream's end was not seen
   */
  public void putSpanAttributes(AttributesBuilder b, Side side, String fullMethod, Status.Code status) {
    if (mode.emitOld()) {
      putOld(b, fullMethod, status, !mode.emitStable());
    }
    if (mode.emitStable()) {
      putStable(b, side, fullMethod, status);
    }
  }

  /** The stable histograms' attributes of a finished call ({@code status} non-null). */
  public static Attributes stableMetricAttributes(Side side, String fullMethod, Status.Code status) {
    AttributesBuilder b = Attributes.builder();
    putStable(b, side, fullMethod, Objects.requireNonNull(status, "status"));
    return b.build();
  }

  /** The old histograms' attributes of a finished call ({@code status} non-null). */
  public static Attributes oldMetricAttributes(String fullMethod, Status.Code status) {
    AttributesBuilder b = Attributes.builder();
    putOld(b, fullMethod, Objects.requireNonNull(status, "status"), true);
    return b.build();
  }

  /**
   * Puts captured metadata, one string-array attribute per header name.
   *
   * @param request request metadata (else response headers and trailers)
   * @param metadata header name (lower case) → values in wire order
   */
  public void putMetadata(AttributesBuilder b, boolean request, Map<String, List<String>> metadata) {
    metadata.forEach(
        (name, values) -> {
          if (mode.emitStable()) {
            String prefix = request ? RpcAttributes.REQUEST_METADATA_PREFIX : RpcAttributes.RESPONSE_METADATA_PREFIX;
            b.put(RpcAttributes.metadataKey(prefix, name), List.copyOf(values));
          }
          if (mode.emitOld()) {
            String prefix =
                request ? RpcAttributes.OLD_REQUEST_METADATA_PREFIX : RpcAttributes.OLD_RESPONSE_METADATA_PREFIX;
            b.put(RpcAttributes.metadataKey(prefix, name), List.copyOf(values));
          }
        });
  }

  private static void putStable(AttributesBuilder b, Side side, String fullMethod, Status.Code status) {
    b.put(RpcAttributes.RPC_SYSTEM_NAME, RpcAttributes.GRPC);
    b.put(RpcAttributes.RPC_METHOD, fullMethod != null ? fullMethod : RpcAttributes.OTHER_METHOD);
    if (status != null) {
      b.put(RpcAttributes.RPC_RESPONSE_STATUS_CODE, status.name());
      if (GrpcStatus.isError(status, side)) {
        b.put(RpcAttributes.ERROR_TYPE, status.name());
      }
    }
  }

  private static void putOld(AttributesBuilder b, String fullMethod, Status.Code status, boolean withMethod) {
    b.put(RpcAttributes.RPC_SYSTEM, RpcAttributes.GRPC);
    if (fullMethod != null) {
      int slash = fullMethod.indexOf('/');
      b.put(RpcAttributes.RPC_SERVICE, fullMethod.substring(0, slash));
      if (withMethod) {
        b.put(RpcAttributes.RPC_METHOD, fullMethod.substring(slash + 1));
      }
    }
    if (status != null) {
      b.put(RpcAttributes.RPC_GRPC_STATUS_CODE, (long) status.value());
    }
  }
}
