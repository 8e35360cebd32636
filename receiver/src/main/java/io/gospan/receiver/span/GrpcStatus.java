package io.gospan.receiver.span;

import io.gospan.receiver.event.Side;
import java.util.EnumSet;
import java.util.Set;

/** gRPC status codes, and which of them the RPC semantic conventions call an error on each side. */
public enum GrpcStatus {
  OK,
  CANCELLED,
  UNKNOWN,
  INVALID_ARGUMENT,
  DEADLINE_EXCEEDED,
  NOT_FOUND,
  ALREADY_EXISTS,
  PERMISSION_DENIED,
  RESOURCE_EXHAUSTED,
  FAILED_PRECONDITION,
  ABORTED,
  OUT_OF_RANGE,
  UNIMPLEMENTED,
  INTERNAL,
  UNAVAILABLE,
  DATA_LOSS,
  UNAUTHENTICATED;

  private static final GrpcStatus[] BY_CODE = values();

  /** Server spans: only these are errors (the others are the caller's problem). */
  private static final Set<GrpcStatus> SERVER_ERRORS =
      EnumSet.of(UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS);

  public int code() {
    return ordinal();
  }

  /** The status for a numeric code; codes outside 0..16 are UNKNOWN (as gRPC itself treats them). */
  public static GrpcStatus fromCode(int code) {
    return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
  }

  /** Parses a {@code grpc-status} value; {@code null} when it is not a decimal number. */
  public static GrpcStatus parse(String grpcStatus) {
    if (grpcStatus == null || grpcStatus.isEmpty() || grpcStatus.length() > 9) {
      return null;
    }
    for (int i = 0; i < grpcStatus.length(); i++) {
      char c = grpcStatus.charAt(i);
      if (c < '0' || c > '9') {
        return null;
      }
    }
    return fromCode(Integer.parseInt(grpcStatus));
  }

  /**
   * The status gRPC derives from an HTTP {@code :status} when trailers carry no {@code grpc-status}
   * (gRPC's "HTTP to gRPC status code mapping").
   */
  public static GrpcStatus fromHttpStatus(String httpStatus) {
    if (httpStatus == null) {
      return UNKNOWN;
    }
    return switch (httpStatus) {
      case "400" -> INTERNAL;
      case "401" -> UNAUTHENTICATED;
      case "403" -> PERMISSION_DENIED;
      case "404" -> UNIMPLEMENTED;
      case "429", "502", "503", "504" -> UNAVAILABLE;
      default -> UNKNOWN;
    };
  }

  /** Whether a span on {@code side} ending with this status has status ERROR. */
  public boolean isError(Side side) {
    return side == Side.CLIENT ? this != OK : SERVER_ERRORS.contains(this);
  }
}
