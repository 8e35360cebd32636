package io.gospan.receiver.span;

import io.gospan.receiver.event.Side;
import io.grpc.Status;
import java.util.EnumSet;
import java.util.Set;

/**
 * What gospan adds to grpc-java's {@link Status.Code} (the codes, their names and numbers): reading
 * a {@code grpc-status} value as grpc-go does, the status a missing one gets from the HTTP
 * {@code :status}, and which codes the RPC semantic conventions call an error on each side. The
 * semantic conventions' string form of a code ({@code rpc.response.status_code}, {@code error.type})
 * is {@link Status.Code#name()}; the old {@code rpc.grpc.status_code} is {@link Status.Code#value()}.
 */
public final class GrpcStatus {
  /** Server spans: only these are errors (the others are the caller's problem). */
  private static final Set<Status.Code> SERVER_ERRORS = EnumSet.of(
      Status.Code.UNKNOWN, Status.Code.DEADLINE_EXCEEDED, Status.Code.UNIMPLEMENTED,
      Status.Code.INTERNAL, Status.Code.UNAVAILABLE, Status.Code.DATA_LOSS);

  private GrpcStatus() {}

  /**
   * Parses a {@code grpc-status} value as grpc-go reads it (a decimal number, leading zeros
   * allowed: grpc-go internal/transport/http2_client.go, {@code strconv.ParseInt}); codes outside
   * 0..16 are {@link Status.Code#UNKNOWN} ({@link Status#fromCodeValue}).
   *
   * @return the code, or {@code null} when the value is not a decimal number of at most 9 digits
   *     (grpc-java's own reader of the header takes only one or two digits)
   */
  public static Status.Code parse(String grpcStatus) {
    if (grpcStatus == null || grpcStatus.isEmpty() || grpcStatus.length() > 9) {
      return null;
    }
    for (int i = 0; i < grpcStatus.length(); i++) {
      char c = grpcStatus.charAt(i);
      if (c < '0' || c > '9') {
        return null;
      }
    }
    return Status.fromCodeValue(Integer.parseInt(grpcStatus)).getCode();
  }

  /**
   * The status gRPC derives from an HTTP {@code :status} when trailers carry no {@code grpc-status}
   * (gRPC's doc/http-grpc-status-mapping.md; grpc-java has it only in its internal {@code
   * io.grpc.internal.GrpcUtil}); {@link Status.Code#UNKNOWN} for {@code null} and any other value.
   */
  public static Status.Code fromHttpStatus(String httpStatus) {
    if (httpStatus == null) {
      return Status.Code.UNKNOWN;
    }
    return switch (httpStatus) {
      case "400" -> Status.Code.INTERNAL;
      case "401" -> Status.Code.UNAUTHENTICATED;
      case "403" -> Status.Code.PERMISSION_DENIED;
      case "404" -> Status.Code.UNIMPLEMENTED;
      case "429", "502", "503", "504" -> Status.Code.UNAVAILABLE;
      default -> Status.Code.UNKNOWN;
    };
  }

  /**
   * Whether a span on {@code side} ending with {@code code} has status ERROR (the RPC semantic
   * conventions: every code but OK on a client; on a server only UNKNOWN, DEADLINE_EXCEEDED,
   * UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS).
   */
  public static boolean isError(Status.Code code, Side side) {
    return side == Side.CLIENT ? code != Status.Code.OK : SERVER_ERRORS.contains(code);
  }
}
