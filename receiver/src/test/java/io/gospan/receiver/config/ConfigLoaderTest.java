package io.gospan.receiver.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {

  static GospanConfig parse(String yaml) {
    return ConfigLoader.parse(yaml, "test.yaml", Map.of());
  }

  static GospanConfig parse(String yaml, Map<String, String> env) {
    return ConfigLoader.parse(yaml, "test.yaml", env);
  }

  static void assertProblem(String yaml, String... fragments) {
    assertProblem(yaml, Map.of(), fragments);
  }

  static void assertProblem(String yaml, Map<String, String> env, String... fragments) {
    assertThatThrownBy(() -> parse(yaml, env)).isInstanceOf(ConfigException.class).satisfies(e -> {
      for (String f : fragments) {
        assertThat(e.getMessage()).contains(f);
      }
    });
  }

  @Test
  void noFileGivesDefaults() {
    GospanConfig c = ConfigLoader.load(null, Map.of());
    assertThat(c).isEqualTo(GospanConfig.defaults());
    assertThat(c.exporter().type()).isEqualTo(ExporterType.OTLP);
    assertThat(c.exporter().otlp().protocol()).isEqualTo(OtlpProtocol.GRPC);
    assertThat(c.exporter().otlp().endpoint()).isEqualTo("http://localhost:4317");
    assertThat(c.discovery().instrument()).isEmpty();
    assertThat(c.semconv().rpc()).isEqualTo(SemconvMode.STABLE);
    assertThat(c.streams().timeout()).isEqualTo(Duration.ofMinutes(2));
    assertThat(c.telemetry().http().address()).isEqualTo("0.0.0.0:9464");
  }

  @Test
  void shippedConfigIsValidAndStatesTheDefaults() {
    Path shipped = Path.of("..", "config", "gospan.yaml");
    assertThat(shipped).exists();
    assertThat(ConfigLoader.load(shipped, Map.of())).isEqualTo(GospanConfig.defaults());
  }

  @Test
  void exportQueueKeys() {
    var d = GospanConfig.defaults().exporter().queue();
    assertThat(d.maxBytes()).isEqualTo(32L << 20);
    assertThat(d.directory()).isNull();
    assertThat(d.retryInterval()).isEqualTo(Duration.ofMillis(500));
    var q = parse("exporter:\n  queue: {max_bytes: 64KiB, directory: /var/lib/gospan, retry_interval: 200ms}\n").exporter().queue();
    assertThat(q.maxBytes()).isEqualTo(65536);
    assertThat(q.directory()).isEqualTo("/var/lib/gospan");
    assertThat(q.retryInterval()).isEqualTo(Duration.ofMillis(200));
    assertThat(parse("exporter:\n  queue: {max_bytes: 1000}\n").exporter().queue().maxBytes()).isEqualTo(1000);
    assertThat(parse("exporter:\n  queue: {max_bytes: 0}\n").exporter().queue().enabled()).isFalse();
    assertProblem("exporter:\n  queue: {max_bytes: 12 parsecs}\n", "exporter.queue.max_bytes", "not a size");
    assertProblem("exporter:\n  queue: {max_bytes: -1}\n", "exporter.queue.max_bytes", "negative");
    assertProblem("exporter:\n  queue: {max_bytes: 3GiB, directory: /tmp/q}\n", "exporter.queue.max_bytes", "2GiB");
    assertProblem("exporter:\n  queue: {retry_interval: 0s}\n", "exporter.queue.retry_interval", "greater than zero");
  }

  @Test
  void linkKeys(@TempDir Path dir) throws Exception {
    var d = GospanConfig.defaults().link();
    assertThat(d.enabled()).isTrue();
    assertThat(d.listen()).isEqualTo("0.0.0.0:9465");
    assertThat(d.tls().enabled()).isFalse();
    assertThat(d.tls().serverName()).isEqualTo("gospan-link");
    assertThat(d.clockSkew()).isEqualTo(Duration.ofMillis(250));
    Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
    Path cert = Files.writeString(dir.resolve("c.pem"), "x");
    Path key = Files.writeString(dir.resolve("k.pem"), "x");
    var l = parse("link:\n  enabled: false\n  listen: \"10.1.2.3:7000\"\n  clock_skew: 1s\n  tls: {ca_file: %s, cert_file: %s, key_file: %s, server_name: links.example}\n"
        .formatted(ca, cert, key)).link();
    assertThat(l.enabled()).isFalse();
    assertThat(l.listen()).isEqualTo("10.1.2.3:7000");
    assertThat(l.clockSkew()).isEqualTo(Duration.ofSeconds(1));
    assertThat(l.tls()).isEqualTo(new GospanConfig.LinkTlsConfig(ca.toString(), cert.toString(), key.toString(), "links.example"));
    assertProblem("link:\n  listen: \"nohostport\"\n", "link.listen", "host:port");
    assertProblem("link:\n  listen: \"0.0.0.0:0\"\n", "link.listen", "needs a port");
    assertProblem("link:\n  clock_skew: PT-1S\n", "link.clock_skew", "negative");
    assertProblem("link:\n  tls: {cert_file: %s}\n".formatted(cert), "link.tls", "go together");
    assertProblem("link:\n  tls: {ca_file: /nonexistent/ca.pem, cert_file: %s, key_file: %s}\n".formatted(cert, key),
        "link.tls.ca_file", "cannot read");
    assertProblem("link:\n  tls: {server_name: \"\"}\n", "link.tls.server_name", "empty");
  }

  @Test
  void lingerKeys() {
    assertThat(GospanConfig.defaults().discovery().linger()).isEqualTo(Duration.ofMinutes(10));
    assertThat(GospanConfig.defaults().discovery().maxLingeringBinaries()).isEqualTo(64);
    GospanConfig c = parse("discovery:\n  linger: 30s\n  max_lingering_binaries: 5\n");
    assertThat(c.discovery().linger()).isEqualTo(Duration.ofSeconds(30));
    assertThat(c.discovery().maxLingeringBinaries()).isEqualTo(5);
    assertThat(parse("discovery:\n  linger: 0s\n").discovery().linger()).isZero();
    assertProblem("discovery:\n  linger: PT-1S\n", "discovery.linger", "negative");
    assertProblem("discovery:\n  max_lingering_binaries: -1\n", "discovery.max_lingering_binaries", "negative");
  }

  @Test
  void shippedExamplesParse() throws Exception {
    try (var files = Files.list(Path.of("..", "config", "examples"))) {
      List<Path> yamls = files.filter(f -> f.toString().endsWith(".yaml")).toList();
      assertThat(yamls).isNotEmpty();
      for (Path f : yamls) {
        String text = Files.readString(f);
        if (text.contains("/etc/gospan/tls/")) {
          // TLS files do not exist here: check that exactly that is what stops it.
          assertThatThrownBy(() -> ConfigLoader.load(f, Map.of())).hasMessageContaining("exporter.otlp.tls.ca_file");
        } else {
          assertThat(ConfigLoader.load(f, Map.of())).as(f.toString()).isNotNull();
        }
      }
    }
  }

  @Test
  void everyKeyBinds(@TempDir Path dir) throws Exception {
    Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
    Path cert = Files.writeString(dir.resolve("c.pem"), "x");
    Path key = Files.writeString(dir.resolve("k.pem"), "x");
    GospanConfig c =
        parse(
            """
            discovery:
              instrument:
                - exe_path: "/app/*"
                  name: "greeter-.*"
                  open_port: 50051
                  container_id: 4f1c2b3a9d8e
              exclude_instrument:
                - name: "debug"
            headers:
              allow: [x-request-id]
            streams:
              timeout: 90s
              max_in_flight: 10
              link_wait: 500ms
              max_pending_links: 7
            semconv:
              rpc: dup
            resource:
              attributes:
                deployment.environment.name: staging
                team.size: 3
            exporter:
              type: otlp
              otlp:
                protocol: http/protobuf
                endpoint: https://collector:4318/base
                headers: {api-key: k1}
                compression: gzip
                timeout: 3s
                tls: {ca_file: %s, cert_file: %s, key_file: %s}
              file: {path: /tmp/s.jsonl, metrics_path: /tmp/m.jsonl}
              batch: {max_queue_size: 100, max_export_batch_size: 10, schedule_delay: 200ms, max_export_request_bytes: 1MiB}
              retry: {max_attempts: 3, initial_backoff: 100ms, max_backoff: 1s}
            metrics:
              enabled: false
              export_interval: 1m
            telemetry:
              http: {enabled: false, address: "127.0.0.1:0"}
            """
                .formatted(ca, cert, key));
    assertThat(c.discovery().instrument()).containsExactly(
        new GospanConfig.Selector("/app/*", "greeter-.*", 50051, "4f1c2b3a9d8e"));
    assertThat(c.discovery().excludeInstrument()).containsExactly(new GospanConfig.Selector(null, "debug", null, null));
    assertThat(c.headers().allow()).containsExactly("x-request-id");
    assertThat(c.streams()).isEqualTo(
        new GospanConfig.StreamsConfig(Duration.ofSeconds(90), 10, Duration.ofMillis(500), 7));
    assertThat(c.semconv().rpc()).isEqualTo(SemconvMode.DUP);
    assertThat(c.resource().attributes()).containsEntry("team.size", "3");
    var o = c.exporter().otlp();
    assertThat(o.protocol()).isEqualTo(OtlpProtocol.HTTP_PROTOBUF);
    assertThat(o.endpoint()).isEqualTo("https://collector:4318/base");
    assertThat(o.headers()).containsEntry("api-key", "k1");
    assertThat(o.compression()).isEqualTo(Compression.GZIP);
    assertThat(o.timeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(o.tls().certFile()).isEqualTo(cert.toString());
    assertThat(c.exporter().file().metricsPath()).isEqualTo("/tmp/m.jsonl");
    assertThat(c.exporter().batch().scheduleDelay()).isEqualTo(Duration.ofMillis(200));
    assertThat(c.exporter().batch().maxExportRequestBytes()).isEqualTo(1L << 20);
    assertThat(parse("").exporter().batch().maxExportRequestBytes()).isEqualTo(3L << 20);
    assertThat(c.exporter().retry().maxAttempts()).isEqualTo(3);
    assertThat(c.metrics().enabled()).isFalse();
    assertThat(c.telemetry().http().enabled()).isFalse();
  }

  @Test
  void unknownKeyIsNamed() {
    assertProblem("exporter:\n  otlp:\n    endpiont: http://x:4317\n", "test.yaml", "exporter.otlp.endpiont", "unknown key",
        "endpoint");
    assertProblem("streams:\n  max_inflight: 3\n", "streams.max_inflight", "unknown key");
    assertProblem("tracing: {}\n", "tracing", "unknown key");
  }

  @Test
  void aCredentialHeaderFailsAtLoadInOneLineNamingTheKey() {
    // by the rule: api-key is no exact entry of any list, it contains "api-key"
    assertThatThrownBy(() -> parse("headers:\n  allow: [x-request-id, api-key]\n"))
        .isInstanceOf(ConfigException.class)
        .satisfies(e -> {
          assertThat(e.getMessage()).contains("headers.allow[1]").contains("'api-key'").contains("credentials");
          assertThat(e.getMessage().lines()).hasSize(1);
        });
  }

  @Test
  void requestOnlyHeadersAreTheirOwnListCheckedTheSameWay() {
    GospanConfig c = parse("headers:\n  allow: [user-agent]\n  allow_request: [x-request-id, user-agent]\n");
    assertThat(c.headers().allow()).containsExactly("user-agent");
    assertThat(c.headers().allowRequest()).containsExactly("x-request-id", "user-agent");
    assertThat(c.headers().all()).containsExactly("user-agent", "x-request-id");
    assertThat(parse("headers: {}\n").headers().allowRequest()).isEmpty();
    assertProblem("headers:\n  allow_request: [x-request-id, x-auth-token]\n", "headers.allow_request[1]", "credentials");
  }

  @Test
  void theRetryCounterIsNoCredential() {
    assertThat(parse("headers:\n  allow: [grpc-previous-rpc-attempts, user-agent]\n").headers().allow())
        .containsExactly("grpc-previous-rpc-attempts", "user-agent");
  }

  @Test
  void wrongTypeIsNamed() {
    assertProblem("streams:\n  max_in_flight: lots\n", "streams.max_in_flight");
    assertProblem("streams:\n  timeout: 30\n", "streams.timeout", "unit");
    assertProblem("streams:\n  timeout: soon\n", "streams.timeout", "not a duration");
    assertProblem("exporter:\n  type: kafka\n", "exporter.type", "otlp, console, file, none");
    assertProblem("semconv:\n  rpc: newest\n", "semconv.rpc", "stable, old, dup");
    assertProblem("headers:\n  allow: x-request-id\n", "headers.allow");
    assertProblem("exporter: otlp\n", "exporter");
    assertProblem("- a\n- b\n", "top level");
    assertProblem("streams: {timeout: [}\n", "not valid YAML");
  }

  @Test
  void badValuesAreNamed() {
    assertProblem("exporter:\n  otlp:\n    endpoint: localhost:4317\n", "exporter.otlp.endpoint", "http://");
    assertProblem("exporter:\n  otlp:\n    endpoint: \"http://\"\n", "exporter.otlp.endpoint");
    assertProblem("exporter:\n  otlp:\n    endpoint: http://h:4317/v1/traces\n", "exporter.otlp.endpoint", "no path");
    assertProblem("exporter:\n  otlp:\n    endpoint: http://h:4317\n    tls: {ca_file: /nonexistent/ca.pem}\n",
        "exporter.otlp.tls.ca_file", "cannot read");
    assertProblem("headers:\n  allow: [Authorization]\n", "headers.allow[0]", "lower-case");
    assertProblem("headers:\n  allow: [x-request-id, cookie]\n", "headers.allow[1]", "credentials");
    assertProblem("headers:\n  allow: [x-amz-security-token]\n", "headers.allow[0]", "credentials");
    assertProblem("streams:\n  max_in_flight: 0\n", "streams.max_in_flight");
    assertProblem("discovery:\n  instrument:\n    - name: \"(\"\n", "discovery.instrument[0].name", "regular expression");
    assertProblem("discovery:\n  instrument:\n    - {}\n", "discovery.instrument[0]", "at least one");
    assertProblem("discovery:\n  exclude_instrument:\n    - open_port: 70000\n", "discovery.exclude_instrument[0].open_port");
    assertProblem("exporter:\n  retry: {max_attempts: 9}\n", "exporter.retry.max_attempts");
    assertProblem("exporter:\n  batch: {max_queue_size: 10, max_export_batch_size: 20}\n",
        "exporter.batch.max_export_batch_size");
    assertProblem("exporter:\n  batch: {max_export_request_bytes: 4KiB}\n", "exporter.batch.max_export_request_bytes");
    assertProblem("telemetry:\n  http: {address: nowhere}\n", "telemetry.http.address");
    assertProblem("offsets:\n  prefer: guess\n", "offsets", "dwarf or catalog");
    assertThat(parse("offsets: {prefer: catalog}").offsets().preferCatalog()).isTrue();
    assertThat(parse("").offsets().preferCatalog()).isFalse();
  }

  @Test
  void environmentOverridesTheFile() {
    GospanConfig c =
        parse(
            """
            exporter:
              otlp:
                endpoint: http://file:4317
                headers: {a: "1", b: "2"}
            resource:
              attributes: {env: file, team: x}
            """,
            Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", "https://env:4318",
                "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf",
                "OTEL_EXPORTER_OTLP_HEADERS", "b=3,c=hello%20world",
                "OTEL_EXPORTER_OTLP_TIMEOUT", "2500",
                "OTEL_EXPORTER_OTLP_COMPRESSION", "gzip",
                "OTEL_RESOURCE_ATTRIBUTES", "env=prod,k8s.namespace.name=shop",
                "OTEL_SEMCONV_STABILITY_OPT_IN", "http, rpc/dup, rpc"));
    var o = c.exporter().otlp();
    assertThat(o.endpoint()).isEqualTo("https://env:4318");
    assertThat(o.protocol()).isEqualTo(OtlpProtocol.HTTP_PROTOBUF);
    assertThat(o.headers()).containsExactlyInAnyOrderEntriesOf(Map.of("a", "1", "b", "3", "c", "hello world"));
    assertThat(o.timeout()).isEqualTo(Duration.ofMillis(2500));
    assertThat(o.compression()).isEqualTo(Compression.GZIP);
    assertThat(c.resource().attributes())
        .containsExactlyInAnyOrderEntriesOf(Map.of("env", "prod", "team", "x", "k8s.namespace.name", "shop"));
    assertThat(c.semconv().rpc()).isEqualTo(SemconvMode.DUP);

    assertThat(parse("", Map.of("OTEL_SEMCONV_STABILITY_OPT_IN", "rpc")).semconv().rpc()).isEqualTo(SemconvMode.STABLE);
    assertThat(parse("semconv: {rpc: old}", Map.of("OTEL_SEMCONV_STABILITY_OPT_IN", "http")).semconv().rpc())
        .isEqualTo(SemconvMode.OLD);
    assertThat(parse("exporter: {otlp: {protocol: http/protobuf}}").exporter().otlp().endpoint())
        .isEqualTo("http://localhost:4318");
  }

  @Test
  void badEnvironmentIsNamed() {
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4317"), "OTEL_EXPORTER_OTLP_ENDPOINT",
        "exporter.otlp.endpoint");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"), "OTEL_EXPORTER_OTLP_PROTOCOL",
        "grpc, http/protobuf");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_TIMEOUT", "10 sec"), "OTEL_EXPORTER_OTLP_TIMEOUT", "milliseconds");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_HEADERS", "novalue"), "OTEL_EXPORTER_OTLP_HEADERS", "key=value");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_HEADERS", "a=1, novalue ,b=2"), "OTEL_EXPORTER_OTLP_HEADERS: 'novalue' is not key=value");
    assertProblem("", Map.of("OTEL_RESOURCE_ATTRIBUTES", "a=1, =2"), "OTEL_RESOURCE_ATTRIBUTES: '=2' is not key=value");
  }

  @Test
  void timeoutVariablesAreReadAsTheSdkReadsDurationsPerSignalWinning() {
    // the SDK's ConfigProperties.getDuration: milliseconds without a unit (the specification), or a unit
    var o = parse("", Map.of(
        "OTEL_EXPORTER_OTLP_TIMEOUT", "10s",
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1500",
        "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", " 2 m ")).exporter().otlp();
    assertThat(o.timeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(o.forSignal(OtlpSignal.TRACES).timeout()).isEqualTo(Duration.ofMillis(1500));
    assertThat(o.forSignal(OtlpSignal.METRICS).timeout()).isEqualTo(Duration.ofMinutes(2));
    var shared = parse("exporter: {otlp: {traces: {timeout: 3s}}}", Map.of("OTEL_EXPORTER_OTLP_TIMEOUT", "500us"))
        .exporter().otlp();
    assertThat(shared.forSignal(OtlpSignal.METRICS).timeout()).isEqualTo(Duration.ofNanos(500_000));
    assertThat(shared.forSignal(OtlpSignal.TRACES).timeout()).as("the file's per-signal key").isEqualTo(Duration.ofSeconds(3));
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "-5s"), "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT",
        "greater than zero");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1.5s"), "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "not a number of milliseconds");
  }

  @Test
  void fileDurationsTakeTheSdksUnitsButNeedOne() {
    var d = parse("streams: {timeout: 1d, link_wait: 500us}").streams();
    assertThat(d.timeout()).isEqualTo(Duration.ofDays(1));
    assertThat(d.linkWait()).isEqualTo(Duration.ofNanos(500_000));
    assertThat(parse("link: {clock_skew: 2 s}").link().clockSkew()).isEqualTo(Duration.ofSeconds(2));
    assertThat(parse("streams: {timeout: PT90S}").streams().timeout()).isEqualTo(Duration.ofSeconds(90));
    assertProblem("streams: {timeout: \"30\"}", "streams.timeout", "not a duration", "with a unit");
    assertProblem("streams: {timeout: 30}", "streams.timeout", "needs a unit");
    assertProblem("streams: {timeout: -5s}", "streams.timeout", "not a duration");
    assertProblem("streams: {timeout: 5 sec}", "streams.timeout", "not a duration");
  }

  @Test
  void keyValueListsAreTheSdksMapsEmptyValuesLeftOutLastDuplicateWins() {
    assertThat(ConfigLoader.parseKeyValueList("X", "a=1,empty=,a=2, b = x=y "))
        .containsExactly(Map.entry("a", "2"), Map.entry("b", "x=y"));
  }

  @Test
  void keyValueListsArePercentDecoded() {
    assertThat(ConfigLoader.parseKeyValueList("X", "a=b%2Cc, d = e+f ,"))
        .containsExactlyInAnyOrderEntriesOf(Map.of("a", "b,c", "d", "e+f"));
    assertThat(List.copyOf(ConfigLoader.parseKeyValueList("X", "").keySet())).isEmpty();
  }

  @Test
  void perSignalVariablesWinForTheirSignalAndTheirEndpointIsUsedAsItIs(@TempDir Path dir) throws Exception {
    Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
    Path traceCa = Files.writeString(dir.resolve("trace-ca.pem"), "x");
    Path cert = Files.writeString(dir.resolve("cert.pem"), "x");
    Path key = Files.writeString(dir.resolve("key.pem"), "x");
    GospanConfig c =
        parse(
            "exporter: {otlp: {headers: {a: \"1\"}}}",
            Map.ofEntries(
                Map.entry("OTEL_EXPORTER_OTLP_ENDPOINT", "https://shared:4318"),
                Map.entry("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                Map.entry("OTEL_EXPORTER_OTLP_HEADERS", "b=2"),
                Map.entry("OTEL_EXPORTER_OTLP_CERTIFICATE", ca.toString()),
                Map.entry("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://traces:9999/custom/path"),
                Map.entry("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "b=3,t=x%20y"),
                Map.entry("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1500"),
                Map.entry("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip"),
                Map.entry("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", traceCa.toString()),
                Map.entry("OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", cert.toString()),
                Map.entry("OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", key.toString()),
                Map.entry("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc"),
                Map.entry("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "https://metrics:4317")));
    var o = c.exporter().otlp();
    var traces = o.forSignal(OtlpSignal.TRACES);
    assertThat(traces.endpoint()).isEqualTo("https://traces:9999/custom/path"); // as it is: no /v1/traces
    assertThat(traces.protocol()).isEqualTo(OtlpProtocol.HTTP_PROTOBUF);
    assertThat(traces.headers()).containsExactlyInAnyOrderEntriesOf(Map.of("a", "1", "b", "3", "t", "x y"));
    assertThat(traces.timeout()).isEqualTo(Duration.ofMillis(1500));
    assertThat(traces.compression()).isEqualTo(Compression.GZIP);
    assertThat(traces.tls().caFile()).isEqualTo(traceCa.toString());
    assertThat(traces.tls().certFile()).isEqualTo(cert.toString());
    assertThat(traces.tls().keyFile()).isEqualTo(key.toString());
    var metrics = o.forSignal(OtlpSignal.METRICS);
    assertThat(metrics.endpoint()).isEqualTo("https://metrics:4317");
    assertThat(metrics.protocol()).isEqualTo(OtlpProtocol.GRPC);
    assertThat(metrics.headers()).containsExactlyInAnyOrderEntriesOf(Map.of("a", "1", "b", "2"));
    assertThat(metrics.timeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(metrics.compression()).isEqualTo(Compression.NONE);
    assertThat(metrics.tls().caFile()).isEqualTo(ca.toString());
    assertThat(metrics.tls().certFile()).isNull();

    // The shared endpoint is a base URL for http/protobuf: the signal's path is appended.
    var shared = parse("", Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/base/", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"))
        .exporter().otlp();
    assertThat(shared.forSignal(OtlpSignal.TRACES).endpoint()).isEqualTo("http://c:4318/base/v1/traces");
    assertThat(shared.forSignal(OtlpSignal.METRICS).endpoint()).isEqualTo("http://c:4318/base/v1/metrics");
    // Only the signal's protocol set: that protocol's default endpoint.
    var onlyProtocol = parse("", Map.of("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf")).exporter().otlp();
    assertThat(onlyProtocol.forSignal(OtlpSignal.METRICS).endpoint()).isEqualTo("http://localhost:4318/v1/metrics");
    assertThat(onlyProtocol.forSignal(OtlpSignal.TRACES).endpoint()).isEqualTo("http://localhost:4317");
    // The same in YAML.
    var yaml = parse("exporter: {otlp: {traces: {endpoint: \"http://t:4317\"}, metrics: {timeout: 3s}}}").exporter().otlp();
    assertThat(yaml.forSignal(OtlpSignal.TRACES).endpoint()).isEqualTo("http://t:4317");
    assertThat(yaml.forSignal(OtlpSignal.METRICS).timeout()).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void badPerSignalAndMalformedVariablesAreNamed() {
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "collector:4317"), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "exporter.otlp.traces.endpoint");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://c:4317/v1/metrics"),
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "gRPC endpoint has no path");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json"), "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        "grpc, http/protobuf");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "soon"), "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "milliseconds");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "0"), "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "greater than zero");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "zstd"), "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION",
        "none, gzip");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_HEADERS", "bad name=1"), "OTEL_EXPORTER_OTLP_HEADERS",
        "'bad name' is not a header name");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-ok=line%0Abreak"), "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "control character");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "=1"), "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "key=value");
    assertProblem("", Map.of("OTEL_RESOURCE_ATTRIBUTES", "%zz=1"), "OTEL_RESOURCE_ATTRIBUTES", "percent-encoding");
    assertProblem("", Map.of("OTEL_RESOURCE_ATTRIBUTES", "a=%g1"), "OTEL_RESOURCE_ATTRIBUTES", "percent-encoding");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "/nonexistent/ca.pem",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://c:4317"),
        "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "cannot read");
    assertProblem("", Map.of("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/etc/hostname", "OTEL_EXPORTER_OTLP_ENDPOINT", "https://c:4317"),
        "OTEL_EXPORTER_OTLP_CLIENT_KEY", "go together");
  }

  @Test
  void metricsPrometheusKey() {
    assertThat(GospanConfig.defaults().metrics().prometheus()).isTrue();
    assertThat(parse("metrics: {prometheus: false}\n").metrics().prometheus()).isFalse();
    assertThat(parse("metrics: {prometheus: false}\n").metrics().enabled()).as("the other signal untouched").isTrue();
    assertProblem("metrics: {prometheus: sometimes}\n", "metrics.prometheus");
  }
}
