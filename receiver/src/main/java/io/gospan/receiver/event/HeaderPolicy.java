package io.gospan.receiver.event;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which header names gospan may capture and export: the one place that decides it. The
 * configuration's {@code headers.allow} is validated with {@link #problem}, the BPF allow-list
 * ({@code io.gospan.receiver.probe.HeaderNames}) is built through it, and span assembly drops
 * every field {@link #isCredential} names even when an event carries one.
 *
 * <p>A name is refused as a credential when, compared case-insensitively,
 *
 * <ul>
 *   <li>it is one of {@link #CREDENTIAL_HEADERS}, or
 *   <li>it contains one of {@link #CREDENTIAL_WORDS} ({@code auth}, {@code token}, {@code secret},
 *       {@code password}, {@code passwd}, {@code cookie}, {@code session}, {@code api-key} / {@code
 *       apikey} / {@code api_key}, {@code signature}, {@code credential}, {@code csrf}, {@code xsrf},
 *       {@code jwt}): the rule catches vendor and framework headers no list has yet.
 * </ul>
 *
 * The HTTP/2 pseudo-headers ({@link #PSEUDO_HEADERS}, RFC 9113 §8.3) are exempt: {@code :authority}
 * is the request's target host, not a credential (RFC 9113 §8.3.1 forbids userinfo in it).
 * {@code grpc-previous-rpc-attempts} (gRFC A6, the retry counter grpc-go sends on retried
 * attempts) is no credential either and may be captured.
 *
 * <p>Sources of {@link #CREDENTIAL_HEADERS}:
 *
 * <ul>
 *   <li>RFC 9110 §11.6.2, §11.7.2: {@code authorization}, {@code proxy-authorization} (and the
 *       challenges {@code www-authenticate}, {@code proxy-authenticate}, §11.6.1, §11.7.1).
 *   <li>RFC 6265 §4.1, §4.2: {@code set-cookie}, {@code cookie}.
 *   <li>RFC 9449 §4: {@code dpop} (an OAuth proof-of-possession JWT).
 *   <li>AWS: {@code x-amz-security-token} (temporary credentials, "Signature Version 4 signing",
 *       IAM User Guide); {@code x-api-key} (API Gateway API keys); {@code
 *       x-amz-server-side-encryption-customer-key} and its {@code copy-source} form (S3 SSE-C,
 *       the customer's encryption key); {@code x-amzn-oidc-data} (Application Load Balancer
 *       authentication: the signed user claims).
 *   <li>Google Cloud: {@code x-goog-api-key} (API keys); {@code x-goog-iap-jwt-assertion}
 *       (Identity-Aware Proxy signed header); {@code x-goog-encryption-key} and its {@code
 *       copy-source} form (Cloud Storage customer-supplied encryption keys); {@code
 *       x-goog-iam-authorization-token}; {@code x-endpoint-api-userinfo} (Cloud Endpoints) and {@code
 *       x-apigateway-api-userinfo} (API Gateway): the caller's JWT claims; {@code
 *       x-firebase-appcheck} (Firebase App Check).
 *   <li>Azure: {@code ocp-apim-subscription-key} (API Management); {@code x-functions-key}
 *       (Functions access keys); {@code x-ms-client-principal}, {@code x-ms-client-principal-id},
 *       {@code x-ms-client-principal-name}, {@code x-ms-client-principal-idp}, {@code
 *       x-ms-token-aad-access-token}, {@code
 *       x-ms-token-aad-id-token} (App Service authentication); {@code x-ms-encryption-key} (Blob
 *       Storage customer-provided keys).
 *   <li>Observability back ends (headers users put in {@code OTEL_EXPORTER_OTLP_HEADERS}): {@code
 *       dd-application-key} (Datadog), {@code x-honeycomb-team} (Honeycomb), {@code x-license-key},
 *       {@code x-insert-key} (New Relic).
 *   <li>Webhooks: {@code x-shopify-hmac-sha256} (Shopify's request signature).
 *   <li>Frameworks and gateways: {@code x-csrf-token} (Rails), {@code x-csrftoken} (Django),
 *       {@code x-xsrf-token} (Angular), {@code apikey} (Kong key-auth), {@code x-auth-token},
 *       {@code x-access-token}.
 * </ul>
 */
public final class HeaderPolicy {
  private HeaderPolicy() {}

  /** Exact names refused (lower case); the sources are in the class comment. */
  public static final Set<String> CREDENTIAL_HEADERS =
      Set.of(
          // RFC 9110
          "authorization",
          "proxy-authorization",
          "www-authenticate",
          "proxy-authenticate",
          // RFC 6265
          "cookie",
          "set-cookie",
          // RFC 9449
          "dpop",
          // AWS
          "x-amz-security-token",
          "x-api-key",
          "x-amz-server-side-encryption-customer-key",
          "x-amz-copy-source-server-side-encryption-customer-key",
          "x-amzn-oidc-data",
          // Google Cloud, Firebase
          "x-goog-api-key",
          "x-goog-iap-jwt-assertion",
          "x-goog-encryption-key",
          "x-goog-copy-source-encryption-key",
          "x-goog-iam-authorization-token",
          "x-endpoint-api-userinfo",
          "x-apigateway-api-userinfo",
          "x-firebase-appcheck",
          // Azure
          "ocp-apim-subscription-key",
          "x-functions-key",
          "x-ms-client-principal",
          "x-ms-client-principal-id",
          "x-ms-client-principal-name",
          "x-ms-client-principal-idp",
          "x-ms-token-aad-access-token",
          "x-ms-token-aad-id-token",
          "x-ms-encryption-key",
          // observability back ends, webhooks
          "dd-application-key",
          "x-honeycomb-team",
          "x-license-key",
          "x-insert-key",
          "x-shopify-hmac-sha256",
          // frameworks and gateways
          "x-csrf-token",
          "x-csrftoken",
          "x-xsrf-token",
          "apikey",
          "api-key",
          "x-auth-token",
          "x-access-token");

  /** A name containing one of these (lower case) is refused. */
  public static final List<String> CREDENTIAL_WORDS =
      List.of(
          "auth",
          "token",
          "secret",
          "password",
          "passwd",
          "cookie",
          "session",
          "api-key",
          "apikey",
          "api_key",
          "signature",
          "credential",
          "csrf",
          "xsrf",
          "jwt");

  /** The HTTP/2 pseudo-header fields (RFC 9113 §8.3, RFC 8441 {@code :protocol}): never credentials. */
  public static final Set<String> PSEUDO_HEADERS =
      Set.of(":method", ":scheme", ":authority", ":path", ":status", ":protocol");

  /** A lower-case field name: RFC 9110 §5.6.2 token characters, lower case as HTTP/2 requires (RFC 9113 §8.2.1). */
  private static final Pattern FIELD_NAME = Pattern.compile("[a-z0-9!#$%&'*+.^_`|~-]+");

  /** Whether {@code name} (any case) names a credential: see the class comment. */
  public static boolean isCredential(String name) {
    if (name == null) {
      return false;
    }
    String n = name.toLowerCase(Locale.ROOT);
    if (PSEUDO_HEADERS.contains(n)) {
      return false;
    }
    if (CREDENTIAL_HEADERS.contains(n)) {
      return true;
    }
    for (String w : CREDENTIAL_WORDS) {
      if (n.contains(w)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Why {@code name} may not be captured as extra metadata, in one line that quotes the name, or
   * {@code null} when it may: it must be a lower-case field name (pseudo-headers are captured by
   * default, not by name) and no credential.
   */
  public static String problem(String name) {
    if (name == null || !FIELD_NAME.matcher(name).matches()) {
      return "'" + name + "' is not a lower-case header name";
    }
    if (isCredential(name)) {
      return "'" + name + "' carries credentials and is never captured";
    }
    return null;
  }

  /**
   * Checks {@code name} as {@link #problem} does.
   *
   * @throws IllegalArgumentException with {@link #problem}'s message
   */
  public static String requireCapturable(String name) {
    String p = problem(name);
    if (p != null) {
      throw new IllegalArgumentException(p);
    }
    return name;
  }

  /** Whether a captured field named {@code name} may be exported as span metadata when {@code allowed} lists it. */
  public static boolean mayExport(String name, Set<String> allowed) {
    return allowed.contains(name) && !isCredential(name);
  }
}
