package io.gospan.receiver.span;

import io.opentelemetry.api.common.AttributeKey;
import java.util.List;

/**
 * Attribute names from the OpenTelemetry RPC semantic conventions (current and pre-1.38), the
 * general network ones, and gospan's own. Kept here rather than pulled from the incubating semconv
 * artifact, whose names move between releases.
 */
public final class RpcAttributes {
  private RpcAttributes() {}

  // Current RPC conventions.
  public static final AttributeKey<String> RPC_SYSTEM_NAME = AttributeKey.stringKey("rpc.system.name");
  /** Current: fully-qualified {@code pkg.Service/Method}. Old: the method alone. */
  public static final AttributeKey<String> RPC_METHOD = AttributeKey.stringKey("rpc.method");
  public static final AttributeKey<String> RPC_RESPONSE_STATUS_CODE =
      AttributeKey.stringKey("rpc.response.status_code");
  public static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
  public static final String REQUEST_METADATA_PREFIX = "rpc.request.metadata.";
  public static final String RESPONSE_METADATA_PREFIX = "rpc.response.metadata.";

  // Older (experimental, up to semconv 1.37) RPC conventions.
  public static final AttributeKey<String> RPC_SYSTEM = AttributeKey.stringKey("rpc.system");
  public static final AttributeKey<String> RPC_SERVICE = AttributeKey.stringKey("rpc.service");
  public static final AttributeKey<Long> RPC_GRPC_STATUS_CODE = AttributeKey.longKey("rpc.grpc.status_code");
  public static final String OLD_REQUEST_METADATA_PREFIX = "rpc.grpc.request.metadata.";
  public static final String OLD_RESPONSE_METADATA_PREFIX = "rpc.grpc.response.metadata.";

  // General.
  public static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
  public static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
  public static final AttributeKey<String> CLIENT_ADDRESS = AttributeKey.stringKey("client.address");
  public static final AttributeKey<Long> CLIENT_PORT = AttributeKey.longKey("client.port");
  public static final AttributeKey<String> NETWORK_PEER_ADDRESS = AttributeKey.stringKey("network.peer.address");
  public static final AttributeKey<Long> NETWORK_PEER_PORT = AttributeKey.longKey("network.peer.port");
  public static final AttributeKey<String> NETWORK_TRANSPORT = AttributeKey.stringKey("network.transport");
  public static final AttributeKey<String> NETWORK_TYPE = AttributeKey.stringKey("network.type");
  public static final AttributeKey<String> NETWORK_LOCAL_ADDRESS = AttributeKey.stringKey("network.local.address");

  // gospan's own.
  /** The stream's end was never seen; the span ends at the last event gospan saw for it. */
  public static final AttributeKey<Boolean> GOSPAN_INCOMPLETE = AttributeKey.booleanKey("gospan.incomplete");
  /** Why: {@code timeout}, {@code connection_closed}, {@code process_exited} or {@code shutdown}. */
  public static final AttributeKey<String> GOSPAN_INCOMPLETE_REASON =
      AttributeKey.stringKey("gospan.incomplete.reason");
  /**
   * A stream's start whose connection's socket was not identified, so the span has no {@code network.peer.*}
   * and is linked only by {@code traceparent}: why ({@code unknown_type}: the {@code net.Conn}'s dynamic type
   * is not among the binary's connection types; {@code no_type_information}; {@code too_many_wrappers};
   * {@code read_failed}; {@code not_a_socket}; {@code other_address_family}; {@code no_load_bias}).
   */
  public static final AttributeKey<String> GOSPAN_CONNECTION_UNIDENTIFIED =
      AttributeKey.stringKey("gospan.connection.unidentified");
  /** Some header field or value was cut short by the BPF capture buffers. */
  public static final AttributeKey<Boolean> GOSPAN_HEADERS_TRUNCATED =
      AttributeKey.booleanKey("gospan.headers.truncated");

  public static final String GRPC = "grpc";
  /** {@code rpc.method} when the method is not known ({@code :path} missing or malformed). */
  public static final String OTHER_METHOD = "_OTHER";

  static AttributeKey<List<String>> metadataKey(String prefix, String header) {
    return AttributeKey.stringArrayKey(prefix + header);
  }
}
