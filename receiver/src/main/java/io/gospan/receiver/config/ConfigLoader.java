package io.gospan.receiver.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.gospan.receiver.config.GospanConfig.ExporterConfig;
import io.gospan.receiver.config.GospanConfig.OtlpConfig;
import io.gospan.receiver.config.GospanConfig.Selector;
import io.gospan.receiver.event.HeaderPolicy;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import io.opentelemetry.sdk.autoconfigure.spi.internal.DefaultConfigProperties;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Loads {@link GospanConfig}: the YAML file (optional) is read into a tree, the {@code OTEL_*}
 * environment variables are written over it, the tree is bound to the records (unknown keys and
 * wrong types fail), and the result is validated. Every failure is a {@link ConfigException} whose
 * message starts with the key (and the environment variable, when one set it).
 *
 * <p>The variables are read with the SDK autoconfigure's {@link ConfigProperties} ({@link
 * #otelProperties}): its {@code getDuration}, {@code getMap} and {@code getList} parse them as the
 * OpenTelemetry Java SDK does; gospan maps them onto its own keys, since it builds its exporters
 * itself (OTLP/gRPC over its own grpc-java channel, the export queue).
 *
 * <p>Environment variables, each overriding the file:
 *
 * <ul>
 *   <li>{@code OTEL_EXPORTER_OTLP_ENDPOINT} → {@code exporter.otlp.endpoint}
 *   <li>{@code OTEL_EXPORTER_OTLP_PROTOCOL} ({@code grpc}, {@code http/protobuf}) → {@code exporter.otlp.protocol}
 *   <li>{@code OTEL_EXPORTER_OTLP_HEADERS} ({@code k=v,k2=v2}, keys and values percent-decoded) → merged over {@code exporter.otlp.headers}
 *   <li>{@code OTEL_EXPORTER_OTLP_TIMEOUT} (milliseconds, or a number with a unit: {@code 10s}) → {@code exporter.otlp.timeout}
 *   <li>{@code OTEL_EXPORTER_OTLP_COMPRESSION} ({@code gzip}, {@code none}) → {@code exporter.otlp.compression}
 *   <li>{@code OTEL_EXPORTER_OTLP_CERTIFICATE}, {@code _CLIENT_CERTIFICATE}, {@code _CLIENT_KEY} (PEM files) →
 *       {@code exporter.otlp.tls.ca_file}, {@code .cert_file}, {@code .key_file}
 *   <li>the same per signal, {@code OTEL_EXPORTER_OTLP_TRACES_*} and {@code OTEL_EXPORTER_OTLP_METRICS_*} →
 *       {@code exporter.otlp.traces.*} and {@code exporter.otlp.metrics.*}, which win for their signal; a
 *       per-signal endpoint is used as it is (no {@code /v1/traces} appended), as the specification says
 *   <li>{@code OTEL_RESOURCE_ATTRIBUTES} ({@code k=v,…}, percent-decoded) → merged over {@code resource.attributes}
 *   <li>{@code OTEL_SEMCONV_STABILITY_OPT_IN} containing {@code rpc/dup} → {@code semconv.rpc: dup};
 *       containing {@code rpc} → {@code semconv.rpc: stable}
 *   <li>{@code OTEL_TRACES_SAMPLER} → {@code sampling.sampler}; {@code OTEL_TRACES_SAMPLER_ARG} (a number) →
 *       {@code sampling.ratio}
 * </ul>
 */
public final class ConfigLoader {

  private static final Pattern CONTAINER_ID = Pattern.compile("[0-9a-f]{12,64}");

  private static final ObjectMapper MAPPER = createMapper();

  private ConfigLoader() {}

  private static ObjectMapper createMapper() {
    YAMLMapper m = new YAMLMapper(new YAMLFactory());
    m.setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);
    m.enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    m.enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
    m.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    m.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    SimpleModule durations = new SimpleModule("gospan-durations");
    durations.addDeserializer(Duration.class, new DurationParser());
    m.registerModule(durations);
    return m;
  }

  /** Loads {@code file} (or only defaults when {@code null}) with the process environment on top. */
  public static GospanConfig load(Path file) {
    return load(file, System.getenv());
  }

  /** Loads {@code file} (or only defaults when {@code null}) with {@code env} on top. */
  public static GospanConfig load(Path file, Map<String, String> env) {
    if (file == null) {
      return parse("", "<defaults>", env);
    }
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ConfigException(file + ": cannot read: " + e.getMessage(), e);
    }
    return parse(text, file.toString(), env);
  }

  /** Parses YAML {@code text} (named {@code source} in messages) with {@code env} on top. */
  public static GospanConfig parse(String text, String source, Map<String, String> env) {
    ObjectNode root;
    try {
      JsonNode node = text.isBlank() ? null : MAPPER.readTree(text);
      if (node == null || node.isNull() || node.isMissingNode()) {
        root = JsonNodeFactory.instance.objectNode();
      } else if (node instanceof ObjectNode o) {
        root = o;
      } else {
        throw new ConfigException(source + ": the top level must be a mapping of sections");
      }
    } catch (JsonProcessingException e) {
      throw new ConfigException(source + ": not valid YAML: " + e.getOriginalMessage() + locationOf(e), e);
    }
    Map<String, String> envSources = new HashMap<>();
    applyEnvironment(root, env, envSources);
    GospanConfig config;
    try {
      config = MAPPER.treeToValue(root, GospanConfig.class);
    } catch (JsonProcessingException e) {
      throw new ConfigException(source + ": " + describe(e, envSources), e);
    }
    if (config == null) {
      config = GospanConfig.defaults();
    }
    try {
      validate(config);
    } catch (KeyProblem p) {
      String env1 = envSources.get(p.key);
      if (env1 == null) { // e.g. exporter.otlp.tls, set by OTEL_EXPORTER_OTLP_CERTIFICATE (exporter.otlp.tls.ca_file)
        env1 = envSources.entrySet().stream().filter(e -> e.getKey().startsWith(p.key + "."))
            .map(Map.Entry::getValue).sorted().findFirst().orElse(null);
      }
      String where = env1 != null ? env1 + " (" + p.key + ")" : p.key;
      throw new ConfigException(source + ": " + where + ": " + p.getMessage());
    }
    return config;
  }

  // ---------------------------------------------------------------- environment

  /**
   * The OTLP exporter variables of the OpenTelemetry specification ("OpenTelemetry Protocol
   * Exporter", configuration options), read as the Java SDK's autoconfigure reads them: the shared
   * {@code OTEL_EXPORTER_OTLP_*} and, per signal, {@code OTEL_EXPORTER_OTLP_TRACES_*} / {@code
   * _METRICS_*}, which win for their signal. Suffix → key under {@code exporter.otlp} (shared) or
   * {@code exporter.otlp.traces} / {@code .metrics}.
   */
  private static final List<String[]> OTLP_VARIABLES =
      List.of(
          new String[] {"ENDPOINT", "endpoint"},
          new String[] {"PROTOCOL", "protocol"},
          new String[] {"COMPRESSION", "compression"},
          new String[] {"TIMEOUT", "timeout"},
          new String[] {"HEADERS", "headers"},
          new String[] {"CERTIFICATE", "tls.ca_file"},
          new String[] {"CLIENT_CERTIFICATE", "tls.cert_file"},
          new String[] {"CLIENT_KEY", "tls.key_file"});

  private static void applyEnvironment(ObjectNode root, Map<String, String> env, Map<String, String> sources) {
    ConfigProperties otel = otelProperties(env);
    applyOtlpExporter(root, otel, sources);
    applyResource(root, otel, sources);
    applySemconv(root, otel, sources);
    applySampling(root, otel, sources);
  }

  /**
   * The {@code OTEL_*} variables of {@code env} as the SDK's autoconfigure reads them: {@link
   * DefaultConfigProperties} under their property names ({@code OTEL_EXPORTER_OTLP_ENDPOINT} →
   * {@code otel.exporter.otlp.endpoint}, {@link #propertyName}), whose {@code getDuration}, {@code
   * getMap} and {@code getList} parse the values. Other variables are left out.
   *
   * <p>{@code DefaultConfigProperties} is in the SDK's {@code spi.internal} package (the only
   * implementation of {@code ConfigProperties} over a map; its version is the BOM's): it is created
   * only here, in {@link #parseKeyValueList} and in {@code DurationParser.parse}.
   */
  static ConfigProperties otelProperties(Map<String, String> env) {
    Map<String, String> properties = new HashMap<>();
    env.forEach((var, value) -> {
      if (var.startsWith("OTEL_")) {
        properties.put(propertyName(var), value);
      }
    });
    return DefaultConfigProperties.createFromMap(properties);
  }

  /** The SDK's property name of an environment variable: lower case, {@code _} → {@code .}. */
  static String propertyName(String var) {
    return var.toLowerCase(Locale.ROOT).replace('_', '.');
  }

  /** The trimmed value of {@code var}, or {@code null} when it is unset or blank. */
  private static String value(ConfigProperties otel, String var) {
    String v = otel.getString(propertyName(var));
    return v == null || v.isBlank() ? null : v.trim();
  }

  private static void applyOtlpExporter(ObjectNode root, ConfigProperties otel, Map<String, String> sources) {
    for (String signal : new String[] {"", "TRACES_", "METRICS_"}) {
      String base = "exporter.otlp" + (signal.isEmpty() ? "" : "." + signal.substring(0, signal.length() - 1).toLowerCase(Locale.ROOT));
      for (String[] v : OTLP_VARIABLES) {
        String var = "OTEL_EXPORTER_OTLP_" + signal + v[0];
        String key = base + "." + v[1];
        String text = value(otel, var);
        if (text == null) {
          continue;
        }
        switch (v[0]) {
          case "TIMEOUT" -> put(root, key, otlpTimeout(otel, var, text).toString()); // ISO-8601, read back by DurationParser
          case "HEADERS" -> {
            ObjectNode h = objectAt(root, key);
            keyValueList(otel, var, text).forEach(h::put);
          }
          default -> put(root, key, text);
        }
        sources.put(key, var);
      }
    }
  }

  private static void applyResource(ObjectNode root, ConfigProperties otel, Map<String, String> sources) {
    String attrs = value(otel, "OTEL_RESOURCE_ATTRIBUTES");
    if (attrs != null) {
      ObjectNode a = objectAt(root, "resource.attributes");
      keyValueList(otel, "OTEL_RESOURCE_ATTRIBUTES", attrs).forEach(a::put);
      sources.put("resource.attributes", "OTEL_RESOURCE_ATTRIBUTES");
    }
  }

  private static void applySemconv(ObjectNode root, ConfigProperties otel, Map<String, String> sources) {
    List<String> values = new ArrayList<>();
    for (String s : otel.getList(propertyName("OTEL_SEMCONV_STABILITY_OPT_IN"))) {
      values.add(s.toLowerCase(Locale.ROOT));
    }
    // rpc/dup takes precedence over rpc when both are present (semantic conventions).
    String mode = values.contains("rpc/dup") ? "dup" : values.contains("rpc") ? "stable" : null;
    if (mode != null) {
      objectAt(root, "semconv").put("rpc", mode);
      sources.put("semconv.rpc", "OTEL_SEMCONV_STABILITY_OPT_IN");
    }
  }

  private static void applySampling(ObjectNode root, ConfigProperties otel, Map<String, String> sources) {
    String sampler = value(otel, "OTEL_TRACES_SAMPLER");
    if (sampler != null) {
      put(root, "sampling.sampler", sampler);
      sources.put("sampling.sampler", "OTEL_TRACES_SAMPLER");
    }
    String arg = value(otel, "OTEL_TRACES_SAMPLER_ARG");
    if (arg != null) {
      try {
        otel.getDouble(propertyName("OTEL_TRACES_SAMPLER_ARG"));
      } catch (ConfigurationException e) {
        throw new ConfigException("OTEL_TRACES_SAMPLER_ARG: '" + printable(arg) + "' is not a number");
      }
      put(root, "sampling.ratio", arg);
      sources.put("sampling.ratio", "OTEL_TRACES_SAMPLER_ARG");
    }
  }

  private static void put(ObjectNode root, String key, String value) {
    int dot = key.lastIndexOf('.');
    objectAt(root, key.substring(0, dot)).put(key.substring(dot + 1), value);
  }

  private static ObjectNode objectAt(ObjectNode root, String dottedPath) {
    ObjectNode node = root;
    StringBuilder seen = new StringBuilder();
    for (String part : dottedPath.split("\\.")) {
      seen.append(seen.length() == 0 ? "" : ".").append(part);
      JsonNode child = node.get(part);
      if (child == null || child.isNull()) {
        node = node.putObject(part);
      } else if (child instanceof ObjectNode o) {
        node = o;
      } else {
        throw new ConfigException(seen + ": must be a mapping, was " + child.getNodeType().name().toLowerCase(Locale.ROOT));
      }
    }
    return node;
  }

  /**
   * An {@code OTEL_EXPORTER_OTLP_*TIMEOUT}, as the SDK's {@code ConfigProperties.getDuration} reads
   * it: milliseconds ({@code 2500}, as the specification says) or a number with a unit ({@code ns},
   * {@code us}, {@code ms}, {@code s}, {@code m}, {@code h}, {@code d}: {@code 10s}).
   *
   * @throws ConfigException naming {@code var}: anything else
   */
  private static Duration otlpTimeout(ConfigProperties otel, String var, String text) {
    try {
      return otel.getDuration(propertyName(var));
    } catch (ConfigurationException e) {
      throw new ConfigException(var + ": '" + printable(text)
          + "' is not a number of milliseconds, or a number with a unit (ns, us, ms, s, m, h, d), e.g. 10000 or 10s");
    }
  }

  /**
   * Parses the W3C-baggage-like {@code k=v,k2=v2} lists of the OTEL_* variables with the SDK
   * autoconfigure's {@code ConfigProperties.getMap} (split on {@code ,}, then on the first {@code
   * =}, both sides trimmed; an item with an empty value is left out and the last of a repeated key
   * wins, as the SDK does); keys and values are then percent-decoded with {@code +} kept as {@code
   * +} (W3C baggage's encoding; the SDK's OTLP exporter decodes header values with {@code
   * URLDecoder}, which turns {@code +} into a space).
   *
   * @throws ConfigException naming {@code var}: an item without {@code key=value} or with a blank
   *     key (the SDK refuses the first and drops the second silently), bad percent-encoding
   */
  static Map<String, String> parseKeyValueList(String var, String text) {
    return keyValueList(DefaultConfigProperties.createFromMap(Map.of(propertyName(var), text)), var, text);
  }

  private static Map<String, String> keyValueList(ConfigProperties otel, String var, String text) {
    for (String item : text.split(",")) { // the SDK's message names neither the variable nor the item
      int eq = item.indexOf('=');
      if (!item.isBlank() && (eq < 0 || item.substring(0, eq).isBlank())) {
        throw new ConfigException(var + ": '" + printable(item.trim()) + "' is not key=value");
      }
    }
    Map<String, String> out = new LinkedHashMap<>();
    otel.getMap(propertyName(var)).forEach((k, v) -> {
      String key = percentDecode(var, "key", k);
      out.put(key, percentDecode(var, "value of '" + printable(key) + "'", v));
    });
    return out;
  }

  private static String percentDecode(String var, String what, String s) {
    try {
      return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(var + ": bad percent-encoding in the " + what + " '" + printable(s) + "'");
    }
  }

  /** {@code s} with control characters shown as {@code \\uXXXX}, at most 80 characters: safe in a one-line message. */
  static String printable(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length() && b.length() < 80; i++) {
      char c = s.charAt(i);
      if (Character.isISOControl(c)) {
        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  // ---------------------------------------------------------------- binding errors

  private static String describe(JsonProcessingException e, Map<String, String> envSources) {
    if (e instanceof JsonMappingException jme) {
      String key = keyOf(jme.getPath());
      String env = envSources.get(key);
      String where = env != null ? env + " (" + key + ")" : key;
      if (e instanceof UnrecognizedPropertyException u) {
        List<String> known = new ArrayList<>();
        if (u.getKnownPropertyIds() != null) {
          u.getKnownPropertyIds().forEach(k -> known.add(String.valueOf(k)));
        }
        known.sort(null);
        return where + ": unknown key" + (known.isEmpty() ? "" : " (known here: " + String.join(", ", known) + ")");
      }
      Throwable cause = e instanceof ValueInstantiationException ? e.getCause() : null;
      if (cause == null && e.getCause() instanceof IllegalArgumentException iae) {
        cause = iae;
      }
      String problem = cause != null && cause.getMessage() != null ? cause.getMessage() : simplify(jme.getOriginalMessage());
      return where + ": " + problem;
    }
    return e.getOriginalMessage();
  }

  private static String keyOf(List<JsonMappingException.Reference> path) {
    StringBuilder sb = new StringBuilder();
    for (JsonMappingException.Reference r : path) {
      if (r.getFieldName() != null) {
        if (sb.length() > 0) {
          sb.append('.');
        }
        sb.append(r.getFieldName());
      } else if (r.getIndex() >= 0) {
        sb.append('[').append(r.getIndex()).append(']');
      }
    }
    return sb.length() == 0 ? "<top level>" : sb.toString();
  }

  private static String simplify(String jacksonMessage) {
    if (jacksonMessage == null) {
      return "invalid value";
    }
    String m = jacksonMessage;
    if (m.contains("no String-argument") || m.contains("no int/Int-argument") || m.contains("no boolean/Boolean-argument")
        || m.contains("from Array value") || m.contains("START_ARRAY")) {
      if (m.contains("`java.util.ArrayList`") || m.contains("`java.util.List")) {
        return "expected a list (- item, or [a, b])";
      }
      if (m.contains("`java.util.") && m.contains("Map")) {
        return "expected a mapping of key: value";
      }
      if (m.contains("from Array value") || m.contains("START_ARRAY")) {
        return "expected a single value, not a list";
      }
      return "expected a mapping of keys (a section), not a single value";
    }
    int nl = m.indexOf('\n');
    if (nl > 0) {
      m = m.substring(0, nl);
    }
    // "Cannot deserialize value of type `java.lang.Integer` from String "abc": not a valid `java.lang.Integer` value"
    m = m.replace("`java.lang.Integer`", "integer")
        .replace("`java.lang.Boolean`", "boolean (true/false)")
        .replace("`java.lang.String`", "string")
        .replace("`java.time.Duration`", "duration")
        .replace("`java.util.List<", "list of `")
        .replaceAll("`io\\.gospan\\.receiver\\.config\\.GospanConfig\\$(\\w+)`", "section ($1)")
        .replaceAll("`io\\.gospan\\.receiver\\.config\\.(\\w+)`", "$1");
    return m;
  }

  private static String locationOf(JsonProcessingException e) {
    return e.getLocation() == null ? "" : " (line " + e.getLocation().getLineNr() + ")";
  }

  // ---------------------------------------------------------------- validation

  private static final class KeyProblem extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final String key;

    KeyProblem(String key, String message) {
      super(message, null, false, false);
      this.key = key;
    }
  }

  private static void check(boolean ok, String key, String message) {
    if (!ok) {
      throw new KeyProblem(key, message);
    }
  }

  static void validate(GospanConfig c) {
    validateSelectors("discovery.instrument", c.discovery().instrument());
    validateSelectors("discovery.exclude_instrument", c.discovery().excludeInstrument());
    check(!c.discovery().linger().isNegative(), "discovery.linger", "must not be negative");
    check(c.discovery().maxLingeringBinaries() >= 0, "discovery.max_lingering_binaries", "must not be negative");
    check(!c.discovery().holdLimit().isNegative() && !c.discovery().holdLimit().isZero()
        && c.discovery().holdLimit().compareTo(Duration.ofSeconds(5)) <= 0, "discovery.hold_limit",
        "must be more than 0 and at most 5s (an exec waits this long at most)");

    for (String list : List.of("allow", "allow_request")) {
      List<String> allow = list.equals("allow") ? c.headers().allow() : c.headers().allowRequest();
      for (int i = 0; i < allow.size(); i++) {
        String h = allow.get(i);
        String key = "headers." + list + "[" + i + "]";
        String problem = HeaderPolicy.problem(h); // credentials by list and by rule
        check(problem == null, key, problem);
      }
    }

    var s = c.streams();
    check(isPositive(s.timeout()), "streams.timeout", "must be greater than zero");
    check(s.maxInFlight() >= 1, "streams.max_in_flight", "must be at least 1");
    check(!s.linkWait().isNegative(), "streams.link_wait", "must not be negative");
    check(s.maxPendingLinks() >= 0, "streams.max_pending_links", "must not be negative");

    c.resource().attributes().forEach((k, v) -> check(!k.isBlank(), "resource.attributes", "empty attribute name"));
    double ratio = c.sampling().ratio();
    check(ratio >= 0 && ratio <= 1, "sampling.ratio", "must be between 0 and 1, was " + ratio);

    ExporterConfig ex = c.exporter();
    validateOtlp(ex.otlp());
    check(!ex.file().path().isBlank(), "exporter.file.path", "must not be empty");
    var b = ex.batch();
    check(b.maxQueueSize() >= 1, "exporter.batch.max_queue_size", "must be at least 1");
    check(b.maxQueueBytes() >= 64 * 1024, "exporter.batch.max_queue_bytes", "must be at least 64KiB");
    check(b.maxExportBatchSize() >= 1, "exporter.batch.max_export_batch_size", "must be at least 1");
    check(
        b.maxExportBatchSize() <= b.maxQueueSize(),
        "exporter.batch.max_export_batch_size",
        "must not exceed exporter.batch.max_queue_size (" + b.maxQueueSize() + ")");
    check(isPositive(b.scheduleDelay()), "exporter.batch.schedule_delay", "must be greater than zero");
    check(b.maxExportRequestBytes() >= 64 * 1024, "exporter.batch.max_export_request_bytes", "must be at least 64KiB");
    var r = ex.retry();
    check(r.maxAttempts() >= 1 && r.maxAttempts() <= 5, "exporter.retry.max_attempts", "must be 1 (no retry) to 5");
    check(isPositive(r.initialBackoff()), "exporter.retry.initial_backoff", "must be greater than zero");
    check(
        isPositive(r.maxBackoff()) && r.maxBackoff().compareTo(r.initialBackoff()) >= 0,
        "exporter.retry.max_backoff",
        "must be at least exporter.retry.initial_backoff");
    var q = ex.queue();
    check(q.maxBytes() >= 0, "exporter.queue.max_bytes", "must not be negative");
    check(
        q.directory() == null || q.maxBytes() <= Integer.MAX_VALUE,
        "exporter.queue.max_bytes",
        "must be less than 2GiB with exporter.queue.directory (the disk-buffering library's bound is an int)");
    check(q.directory() == null || q.maxBytes() > 0, "exporter.queue.directory", "needs exporter.queue.max_bytes > 0");
    check(isPositive(q.retryInterval()), "exporter.queue.retry_interval", "must be greater than zero");

    check(isPositive(c.metrics().exportInterval()), "metrics.export_interval", "must be greater than zero");
    parseHostPort("telemetry.http.address", c.telemetry().http().address());

    var link = c.link();
    java.net.InetSocketAddress linkAddress = parseHostPort("link.listen", link.listen());
    check(linkAddress.getPort() >= 1, "link.listen", "needs a port, 1-65535 (other gospans are asked at it)");
    check(!link.clockSkew().isNegative(), "link.clock_skew", "must not be negative");
    var lt = link.tls();
    if (lt.enabled()) {
      check(lt.caFile() != null && lt.certFile() != null && lt.keyFile() != null, "link.tls",
          "ca_file, cert_file and key_file go together (mutual TLS between gospans)");
      checkFile("link.tls.ca_file", lt.caFile());
      checkFile("link.tls.cert_file", lt.certFile());
      checkFile("link.tls.key_file", lt.keyFile());
    }
    check(!lt.serverName().isBlank(), "link.tls.server_name", "must not be empty");
  }

  private static boolean isPositive(Duration d) {
    return !d.isNegative() && !d.isZero();
  }

  private static void validateSelectors(String key, List<Selector> selectors) {
    for (int i = 0; i < selectors.size(); i++) {
      Selector sel = selectors.get(i);
      String k = key + "[" + i + "]";
      check(sel != null, k, "empty selector");
      check(
          sel.exePath() != null || sel.name() != null || sel.openPort() != null || sel.containerId() != null,
          k,
          "a selector needs at least one of exe_path, name, open_port, container_id");
      if (sel.exePath() != null) {
        try {
          FileSystems.getDefault().getPathMatcher("glob:" + sel.exePath());
        } catch (IllegalArgumentException e) {
          throw new KeyProblem(k + ".exe_path", "bad glob '" + sel.exePath() + "': " + e.getMessage());
        }
      }
      if (sel.name() != null) {
        try {
          Pattern.compile(sel.name());
        } catch (PatternSyntaxException e) {
          throw new KeyProblem(k + ".name", "bad regular expression: " + e.getDescription());
        }
      }
      if (sel.openPort() != null) {
        check(sel.openPort() >= 1 && sel.openPort() <= 65535, k + ".open_port", "must be a TCP port, 1-65535");
      }
      if (sel.containerId() != null) {
        check(
            CONTAINER_ID.matcher(sel.containerId()).matches(),
            k + ".container_id",
            "must be 12 to 64 lower-case hex digits");
      }
    }
  }

  private static final Pattern HTTP_HEADER_NAME = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]+");

  /** Each signal's resolved OTLP settings ({@link OtlpConfig#forSignal}), errors named by the key that set them. */
  private static void validateOtlp(OtlpConfig o) {
    validateHeaders("exporter.otlp.headers", o.headers());
    for (OtlpSignal signal : OtlpSignal.values()) {
      GospanConfig.OtlpSignalOverrides over = signal == OtlpSignal.TRACES ? o.traces() : o.metrics();
      String own = "exporter.otlp." + signal.configName();
      validateHeaders(own + ".headers", over.headers());
      GospanConfig.OtlpSignalConfig s = o.forSignal(signal);
      boolean ownEndpoint = over.endpoint() != null && !over.endpoint().isBlank();
      String key = ownEndpoint ? own + ".endpoint" : "exporter.otlp.endpoint";
      URI uri;
      try {
        uri = new URI(s.endpoint());
      } catch (URISyntaxException e) {
        throw new KeyProblem(key, "'" + printable(s.endpoint()) + "' is not a URL: " + e.getReason());
      }
      check(
          "http".equals(uri.getScheme()) || "https".equals(uri.getScheme()),
          key,
          "'" + s.endpoint() + "' must start with http:// (plaintext) or https:// (TLS)");
      check(uri.getHost() != null && !uri.getHost().isEmpty(), key, "'" + s.endpoint() + "' has no host");
      check(uri.getPort() == -1 || (uri.getPort() > 0 && uri.getPort() <= 65535), key, "bad port");
      check(uri.getQuery() == null && uri.getFragment() == null, key, "must not have a query or fragment");
      if (s.protocol() == OtlpProtocol.GRPC) {
        check(
            uri.getPath() == null || uri.getPath().isEmpty() || "/".equals(uri.getPath()),
            key,
            "an OTLP/gRPC endpoint has no path (was '" + uri.getPath() + "')");
      }
      check(isPositive(s.timeout()), over.timeout() != null ? own + ".timeout" : "exporter.otlp.timeout", "must be greater than zero");
      var tls = s.tls();
      String tlsKey = over.tls() != null ? own + ".tls" : "exporter.otlp.tls";
      boolean https = "https".equals(uri.getScheme());
      checkFile(tlsKey + ".ca_file", tls.caFile());
      checkFile(tlsKey + ".cert_file", tls.certFile());
      checkFile(tlsKey + ".key_file", tls.keyFile());
      check(
          (tls.certFile() == null) == (tls.keyFile() == null),
          tls.certFile() != null ? tlsKey + ".cert_file" : tlsKey + ".key_file", // the one that is set
          "cert_file and key_file go together (client certificate for mutual TLS)");
      check(
          https || (tls.caFile() == null && tls.certFile() == null),
          tlsKey,
          "TLS files are set but the endpoint " + s.endpoint() + " is plaintext http://; use https://");
    }
  }

  /** Header names are HTTP tokens (RFC 9110 section 5.6.2); values have no control characters (no CR, LF). */
  private static void validateHeaders(String key, Map<String, String> headers) {
    headers.forEach((k, v) -> {
      check(!k.isBlank(), key, "empty header name");
      check(HTTP_HEADER_NAME.matcher(k).matches(), key, "'" + printable(k) + "' is not a header name");
      check(v.chars().noneMatch(c -> c < 0x20 && c != '\t' || c == 0x7f), key,
          "the value of '" + k + "' has a control character (e.g. a line break)");
    });
  }

  private static void checkFile(String key, String file) {
    if (file != null) {
      check(Files.isReadable(Path.of(file)), key, "cannot read '" + file + "'");
    }
  }

  /** Parses {@code host:port} ({@code [v6]:port} for IPv6); used for {@code telemetry.http.address}. */
  public static java.net.InetSocketAddress parseHostPort(String key, String address) {
    int colon = address.lastIndexOf(':');
    check(colon > 0 && colon < address.length() - 1, key, "'" + address + "' is not host:port");
    String host = address.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new KeyProblem(key, "'" + address + "' has a bad port");
    }
    check(port >= 0 && port <= 65535, key, "port must be 0-65535");
    return java.net.InetSocketAddress.createUnresolved(host, port);
  }
}
