package io.gospan.receiver.probe;

import io.gospan.receiver.event.HeaderPolicy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The header names whose values the BPF programs capture, and the id each is sent as. Ids are
 * positions in this list; the {@code header_names} map holds name → id. Values of every other
 * field never leave the kernel.
 *
 * <p>Credentials can never be captured: {@link #of} refuses every name {@link HeaderPolicy} refuses,
 * even if configured, and no default is one.
 */
public final class HeaderNames {

  /**
   * What spans need, captured by default: the method ({@code :path}), the server address
   * ({@code :authority}), the status ({@code :status}, {@code grpc-status}, {@code grpc-message}),
   * the W3C trace context parent ({@code traceparent}, {@code tracestate}) and, on the ServeHTTP
   * path, {@code content-type} to tell gRPC requests from others. Every name read and value copied
   * costs the traced program time on each call (docs/benchmarks.md), so nothing else is: other
   * metadata ({@code user-agent}, {@code grpc-timeout}) only when the configuration allows it.
   */
  public static final List<String> DEFAULTS =
      List.of(
          ":path",
          ":authority",
          ":status",
          "content-type",
          "grpc-status",
          "grpc-message",
          "traceparent",
          "tracestate");

  private final List<String> names;
  private final Set<String> extras;
  /** Of {@link #extras}: those captured in requests only ({@code headers.allow_request}). */
  private final Set<String> requestOnly;

  private HeaderNames(List<String> names, Set<String> extras, Set<String> requestOnly) {
    this.names = List.copyOf(names);
    this.extras = Set.copyOf(extras);
    this.requestOnly = Set.copyOf(requestOnly);
  }

  /**
   * The defaults plus {@code extra} (e.g. the config's {@code headers.allow}), in that order.
   *
   * @throws IllegalArgumentException for a name {@link HeaderPolicy#problem} refuses (a credential,
   *     or not a lower-case field name), one longer than 31 bytes, or when there are more than
   *     255 names
   */
  public static HeaderNames of(Collection<String> extra) {
    return of(extra, List.of());
  }

  /**
   * The defaults plus {@code extra} (the config's {@code headers.allow}: captured in requests,
   * response headers and trailers) plus {@code requestOnly} ({@code headers.allow_request}: captured
   * in requests only), in that order; a name in both lists is captured everywhere.
   *
   * @throws IllegalArgumentException as {@link #of(Collection)}
   */
  public static HeaderNames of(Collection<String> extra, Collection<String> requestOnly) {
    Set<String> all = new LinkedHashSet<>(DEFAULTS);
    Set<String> extras = new LinkedHashSet<>();
    Set<String> both = new LinkedHashSet<>();
    java.util.List<String> given = new ArrayList<>(extra);
    given.addAll(requestOnly);
    int bothCount = extra.size();
    int at = 0;
    for (String raw : given) {
      boolean isBoth = at++ < bothCount;
      String n = raw.strip();
      HeaderPolicy.requireCapturable(n);
      if (n.length() >= GrpcLayouts.NAME_LEN) {
        throw new IllegalArgumentException(
            "header name '" + n + "' is longer than " + (GrpcLayouts.NAME_LEN - 1) + " bytes");
      }
      all.add(n);
      extras.add(n);
      if (isBoth) {
        both.add(n);
      }
    }
    if (all.size() > 255) {
      throw new IllegalArgumentException("at most 255 header names can be captured, got " + all.size());
    }
    Set<String> onlyRequests = new LinkedHashSet<>(extras);
    onlyRequests.removeAll(both);
    return new HeaderNames(new ArrayList<>(all), extras, onlyRequests);
  }

  public static HeaderNames defaults() {
    return of(List.of());
  }

  /** Whether names beyond {@link #DEFAULTS} are captured (the configuration's allow-lists). */
  public boolean hasExtras() {
    return names.size() > DEFAULTS.size();
  }

  /**
   * Whether names beyond {@link #DEFAULTS} are captured in response headers and trailers
   * ({@code headers.allow}): only the headers probe set reads those, and the response headers before
   * the trailers are then recorded too.
   */
  public boolean capturesResponses() {
    return extras.size() > requestOnly.size();
  }

  /** The names, index = id. */
  public List<String> names() {
    return names;
  }

  /** The name sent as {@code id}, or {@code null} for an id this table did not give out. */
  public String name(int id) {
    return id >= 0 && id < names.size() ? names.get(id) : null;
  }

  /**
   * Defaults only responses (headers, trailers) carry (gRPC over HTTP/2, PROTOCOL-HTTP2.md); the
   * other defaults only requests carry. Names from the allow-list may be in either.
   */
  static final Set<String> RESPONSE_DEFAULTS = Set.of(":status", "grpc-status", "grpc-message");

  /**
   * Needed only on the ServeHTTP path, to record gRPC requests alone: the probes read it there
   * whatever the mask says, and elsewhere only when the configuration allows it.
   */
  static final String CONTENT_TYPE = "content-type";

  /**
   * {@code request_name_lengths}: bit n set when some name a request may carry is n bytes long.
   * The probes skip a request's field of another length without reading its name.
   */
  public int requestLengthMask() {
    return lengthMask(true);
  }

  /** {@code response_name_lengths}: as {@link #requestLengthMask()}, for responses and trailers. */
  public int responseLengthMask() {
    return lengthMask(false);
  }

  private int lengthMask(boolean request) {
    int mask = 0;
    for (String n : names) {
      boolean wanted;
      if (extras.contains(n)) {
        wanted = request || !requestOnly.contains(n); // metadata the configuration allows
      } else if (request) {
        wanted = !RESPONSE_DEFAULTS.contains(n) && !n.equals(CONTENT_TYPE);
      } else {
        wanted = RESPONSE_DEFAULTS.contains(n);
      }
      if (wanted) {
        mask |= 1 << n.length();
      }
    }
    return mask;
  }

  /** The NUL-padded {@code header_names} key of a name. */
  public static byte[] key(String name) {
    byte[] key = new byte[GrpcLayouts.NAME_LEN];
    byte[] b = name.getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(b, 0, key, 0, b.length);
    return key;
  }
}
