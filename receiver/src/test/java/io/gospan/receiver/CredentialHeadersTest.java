package io.gospan.receiver;

import io.gospan.receiver.app.PipelineBuilder;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gospan.receiver.config.ConfigException;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import io.gospan.receiver.event.HeaderEvent;
import io.gospan.receiver.event.HeaderField;
import io.gospan.receiver.event.HeaderPolicy;
import io.gospan.receiver.event.ProbeKind;
import io.gospan.receiver.event.Side;
import io.gospan.receiver.export.Pipeline;
import io.gospan.receiver.probe.HeaderNames;
import io.gospan.receiver.span.Events;
import io.gospan.receiver.span.FakeMetadata;
import io.gospan.receiver.span.FinishedSpan;
import io.gospan.receiver.span.MonotonicClock;
import io.gospan.receiver.span.RpcSemconv;
import io.gospan.receiver.span.SpanAssembler;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.sdk.trace.IdGenerator;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * No credential header can be captured or exported, through any path: configuration validation,
 * the BPF allow-list, span attributes (even when events carry credentials and the assembler's
 * allow-list names them), the span exporters' output and the logs.
 */
class CredentialHeadersTest {

  /**
   * Credential headers of the standards, the major clouds, observability back ends and web
   * frameworks. Each is refused either by name or by {@link HeaderPolicy}'s rule.
   */
  static final List<String> KNOWN_CREDENTIALS =
      List.of(
          // RFC 9110, RFC 6265, RFC 9449
          "authorization", "proxy-authorization", "www-authenticate", "proxy-authenticate", "cookie", "set-cookie",
          "dpop",
          // AWS (SigV4 session tokens, API Gateway keys, S3 SSE-C keys, ALB OIDC)
          "x-amz-security-token", "x-api-key", "x-amz-server-side-encryption-customer-key",
          "x-amz-copy-source-server-side-encryption-customer-key", "x-amzn-oidc-data", "x-amzn-oidc-accesstoken",
          // Google Cloud, Firebase (API keys, IAP, customer-supplied keys, IAM, Cloud Run, Endpoints)
          "x-goog-api-key", "x-goog-iap-jwt-assertion", "x-goog-encryption-key", "x-goog-copy-source-encryption-key",
          "x-goog-iam-authorization-token", "x-goog-iam-authority-selector", "x-goog-authenticated-user-email",
          "x-serverless-authorization", "x-endpoint-api-userinfo", "x-apigateway-api-userinfo", "x-firebase-appcheck",
          // Azure (API Management, Functions, App Service authentication, Storage)
          "ocp-apim-subscription-key", "x-functions-key", "x-ms-client-principal", "x-ms-client-principal-id",
          "x-ms-client-principal-name", "x-ms-client-principal-idp", "x-ms-token-aad-access-token",
          "x-ms-token-aad-id-token", "x-ms-token-aad-refresh-token", "x-ms-encryption-key",
          "x-ms-authorization-auxiliary",
          // Alibaba Cloud
          "x-acs-security-token", "x-oss-security-token",
          // gateways and proxies (Kong, oauth2-proxy, Envoy ext_authz)
          "apikey", "api-key", "x-forwarded-access-token", "x-auth-request-access-token", "x-auth-request-user",
          // HashiCorp, GitLab, GitHub and other webhooks
          "x-vault-token", "x-consul-token", "x-nomad-token", "private-token", "job-token", "x-gitlab-token",
          "x-hub-signature", "x-hub-signature-256", "stripe-signature", "x-slack-signature", "x-twilio-signature",
          "x-shopify-hmac-sha256",
          // observability back ends (what users put in OTEL_EXPORTER_OTLP_HEADERS)
          "dd-api-key", "dd-application-key", "x-honeycomb-team", "x-license-key", "x-insert-key",
          "lightstep-access-token", "x-sentry-auth",
          // web frameworks
          "x-csrf-token", "x-csrftoken", "x-xsrf-token", "csrf-token", "x-auth-token", "x-access-token",
          "x-refresh-token", "x-id-token", "x-api-token", "x-client-secret", "x-session-id", "x-session-token",
          "x-jwt-assertion", "x-user-password");

  /** Every credential this test knows: the policy's own list and the one above. */
  static List<String> all() {
    Set<String> all = new HashSet<>(HeaderPolicy.CREDENTIAL_HEADERS);
    all.addAll(KNOWN_CREDENTIALS);
    return List.copyOf(all);
  }

  static String secret(int i) {
    return "s3cr3t-value-" + i;
  }

  @Test
  void everyKnownCredentialIsOneByThePolicy() {
    assertThat(all()).allMatch(HeaderPolicy::isCredential);
    assertThat(all()).allMatch(n -> n.equals(n.toLowerCase(java.util.Locale.ROOT)));
    // case does not matter
    assertThat(HeaderPolicy.isCredential("Authorization")).isTrue();
    assertThat(HeaderPolicy.isCredential("X-Goog-Api-Key")).isTrue();
  }

  @Test
  void namesThatAreNoCredentialsMayBeCaptured() {
    for (String n : List.of("grpc-previous-rpc-attempts", "x-request-id", "user-agent", "grpc-timeout", "x-b3-traceid",
        "content-type", "grpc-accept-encoding", "x-envoy-attempt-count")) {
      assertThat(HeaderPolicy.problem(n)).as(n).isNull();
    }
    // pseudo-headers are not credentials, though ":authority" contains "auth"
    assertThat(HeaderPolicy.isCredential(":authority")).isFalse();
  }

  @Test
  void configurationRefusesEachInOneLineNamingTheKey() {
    for (String name : all()) {
      assertThatThrownBy(() -> ConfigLoader.parse("headers:\n  allow: [x-request-id, " + name + "]\n", "t.yaml", Map.of()))
          .as(name)
          .isInstanceOf(ConfigException.class)
          .satisfies(e -> {
            assertThat(e.getMessage()).contains("headers.allow[1]").contains("'" + name + "'").contains("credentials");
            assertThat(e.getMessage().lines()).hasSize(1);
          });
    }
  }

  @Test
  void theBpfAllowListRefusesEach() {
    for (String name : all()) {
      assertThatThrownBy(() -> HeaderNames.of(List.of(name))).as(name).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("'" + name + "'");
    }
    assertThat(HeaderNames.defaults().names()).noneMatch(HeaderPolicy::isCredential);
  }

  /** Events of one call per semconv mode, every credential in the request, the response headers and the trailers. */
  static List<HeaderEvent> callsCarryingCredentials(Events conn, long t0, int stream) {
    List<String> names = all();
    List<HeaderField> carried = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      carried.add(HeaderField.of(names.get(i), secret(i)));
    }
    List<HeaderField> response = new ArrayList<>(Events.responseHeaders());
    response.addAll(carried);
    List<HeaderField> trailers = new ArrayList<>(Events.trailers(0, null));
    trailers.addAll(carried);
    conn.extraRequest.addAll(carried);
    conn.extraRequest.add(HeaderField.of("x-request-id", "r-1"));
    long ms = 1_000_000L;
    return List.of(
        conn.clientStart(stream, t0),
        conn.serverStart(stream, t0 + ms),
        Events.ev(conn.serverPid, t0 + 2 * ms, ProbeKind.LOOPY_WRITER_WRITE_HEADER, Side.SERVER, conn.serverConn, null,
            stream, false, response),
        Events.ev(conn.serverPid, t0 + 3 * ms, ProbeKind.LOOPY_WRITER_WRITE_HEADER, Side.SERVER, conn.serverConn, null,
            stream, true, trailers),
        Events.ev(conn.clientPid, t0 + 4 * ms, ProbeKind.HTTP2_CLIENT_OPERATE_HEADERS, Side.CLIENT, conn.clientConn, null,
            stream, false, response),
        Events.ev(conn.clientPid, t0 + 5 * ms, ProbeKind.HTTP2_CLIENT_OPERATE_HEADERS, Side.CLIENT, conn.clientConn, null,
            stream, true, trailers));
  }

  static void assertNoCredentialIn(SpanData s) {
    assertThat(s.getAttributes().asMap()).isNotEmpty();
    s.getAttributes().forEach((k, v) -> {
      for (String name : all()) {
        assertThat(k.getKey()).as("attribute key").doesNotEndWith("." + name);
      }
      assertThat(String.valueOf(v)).as(k.getKey()).doesNotContain("s3cr3t");
    });
    assertThat(s.toString()).doesNotContain("s3cr3t");
  }

  @Test
  void spanAttributesNeverCarryOneEvenWhenEventsAndTheAllowListDo() {
    for (RpcSemconv.Mode mode : RpcSemconv.Mode.values()) {
      Set<String> allow = new HashSet<>(all()); // what validation would refuse, given to the assembler anyway
      allow.add("x-request-id");
      List<FinishedSpan> out = new ArrayList<>();
      SpanAssembler a =
          new SpanAssembler(
              new SpanAssembler.Settings(Duration.ofSeconds(30), 100, Duration.ofSeconds(2), 100, mode, allow),
              MonotonicClock.fixed(1_790_000_000_000_000_000L), new FakeMetadata(), MeterProvider.noop().get("test"),
              out::add, IdGenerator.random());
      callsCarryingCredentials(new Events(40000), 1_000_000_000L, 1).forEach(a::accept);
      assertThat(out).hasSize(2);
      for (FinishedSpan f : out) {
        assertNoCredentialIn(f.span());
        // the allowed, harmless header is there: the filter is not simply dropping all metadata
        assertThat(f.span().getAttributes().asMap().keySet()).anyMatch(k -> k.getKey().endsWith(".x-request-id"));
      }
    }
  }

  @Test
  void exportedSpansAndLogsNeverCarryOne(@TempDir Path dir) throws Exception {
    Path spansFile = dir.resolve("spans.jsonl");
    GospanConfig config =
        ConfigLoader.parse(
            "headers: {allow: [x-request-id]}\n"
                + "exporter: {type: file, console: true, file: {path: " + spansFile + "}}\n"
                + "metrics: {enabled: false}\ntelemetry: {http: {enabled: false}}\n",
            "t.yaml",
            Map.of());
    PrintStream stdout = System.out;
    PrintStream stderr = System.err;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream capture = new PrintStream(printed, true, StandardCharsets.UTF_8);
    System.setOut(capture);
    System.setErr(capture);
    try (Pipeline p = PipelineBuilder.create(config).processMetadata(new FakeMetadata()).build()) {
      List<HeaderEvent> events = callsCarryingCredentials(new Events(40000), p.clock().monotonicNow(), 1);
      events.forEach(p::accept);
      // an event logged whole (as a debugging aid might) shows no credential's value
      events.forEach(e -> LoggerFactory.getLogger(CredentialHeadersTest.class).warn("event {}", e));
      assertThat(p.flush().join(10, TimeUnit.SECONDS).isSuccess()).isTrue();
    } finally {
      System.setOut(stdout);
      System.setErr(stderr);
    }
    String logs = printed.toString(StandardCharsets.UTF_8);
    assertThat(logs).contains("event HeaderEvent[").contains("CLIENT helloworld.Greeter/SayHello");
    assertThat(logs).doesNotContain("s3cr3t");
    String exported = Files.readString(spansFile);
    assertThat(exported).contains("x-request-id").contains("r-1"); // metadata is exported, credentials are not
    assertThat(exported).doesNotContain("s3cr3t");
    for (String name : all()) {
      assertThat(exported).doesNotContain("metadata." + name + "\"");
    }
  }
}
