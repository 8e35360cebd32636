package io.gospan.receiver.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The demo's docker-compose.yml and Dockerfiles are consistent with each other and with the
 * repository: names that must match do, files that are mounted or built exist, the sidecar has
 * what it needs to trace the server, and the images build without a registry. {@link ComposeIT}
 * brings the demo up for real; this test says which part of the files is wrong, in seconds.
 */
class DockerComposeTest {
  /** Capabilities the sidecar needs on current kernels; see docker-compose.yml for each one's reason. */
  static final Set<String> SIDECAR_CAPS = Set.of("SYS_ADMIN", "SYS_PTRACE");

  private static Path root;
  private static JsonNode services;

  @BeforeAll
  static void load() throws IOException {
    root = ExampleApps.repoRoot();
    JsonNode compose = new YAMLMapper().readTree(root.resolve("docker-compose.yml").toFile());
    services = compose.path("services");
    assertThat(services.isObject()).as("docker-compose.yml has services").isTrue();
  }

  private static JsonNode service(String name) {
    JsonNode s = services.path(name);
    assertThat(s.isObject()).as("service %s exists", name).isTrue();
    return s;
  }

  /** The traced services and their gospan sidecars. */
  static final Map<String, String> SIDECARS = Map.of("greeter-server", "gospan-server", "greeter-client", "gospan-client");

  @Test
  void hasTheServicesAndAGospanForEachTracedOne() {
    assertThat(fieldNames(services))
        .containsExactlyInAnyOrder("jaeger", "greeter-server", "greeter-client", "gospan-server", "gospan-client");
  }

  @Test
  void everyServiceReferenceNamesAService() {
    Set<String> names = fieldNames(services);
    List<String> checked = new ArrayList<>();
    services.fields().forEachRemaining(e -> {
      JsonNode s = e.getValue();
      for (String dep : dependsOn(s)) {
        assertThat(names).as("%s depends_on %s", e.getKey(), dep).contains(dep);
        checked.add(e.getKey() + " depends_on " + dep);
      }
      for (String key : List.of("pid", "network_mode", "ipc")) {
        String v = s.path(key).asText("");
        if (v.startsWith("service:")) {
          assertThat(names).as("%s %s: %s", e.getKey(), key, v).contains(v.substring("service:".length()));
          checked.add(e.getKey() + " " + key);
        }
      }
    });
    // each gospan depends on its service and Jaeger, and shares its service's PID and network namespaces
    assertThat(checked).as("service references checked").contains("gospan-server pid", "gospan-server network_mode",
        "gospan-client pid", "gospan-client network_mode");
  }

  /**
   * Each gospan shares its service's PID namespace (it traces that service's processes only) and
   * its network namespace (its link service listens where the other gospan asks: the service's
   * address), with the capabilities it needs.
   */
  @Test
  void eachSidecarSharesItsServicesPidAndNetworkNamespacesWithTheCapabilitiesItNeeds() {
    SIDECARS.forEach((traced, sidecar) -> {
      JsonNode gospan = service(sidecar);
      assertThat(gospan.path("pid").asText()).as(sidecar).isEqualTo("service:" + traced);
      assertThat(gospan.path("network_mode").asText()).as(sidecar).isEqualTo("service:" + traced);
      assertThat(gospan.path("ports").isMissingNode()).as("%s: network_mode service: has no ports of its own", sidecar).isTrue();
      if (!gospan.path("privileged").asBoolean(false)) {
        Set<String> caps = upper(texts(gospan.path("cap_add")));
        assertThat(caps).as("%s cap_add", sidecar).containsAll(SIDECAR_CAPS);
        if (upper(texts(gospan.path("cap_drop"))).contains("ALL")) {
          assertThat(caps).as("with cap_drop ALL, owner-only /proc files need").contains("DAC_READ_SEARCH");
        }
      }
      // The sidecar must start after what it traces and what it exports to.
      assertThat(dependsOn(gospan)).contains(traced, "jaeger");
    });
    // the traced services no longer share one PID namespace: each is seen by its own gospan
    assertThat(service("greeter-client").path("pid").isMissingNode()).isTrue();
    // /metrics of the server's gospan is published on its service (the shared network namespace)
    assertThat(texts(service("greeter-server").path("ports"))).contains("9464:9464");
  }

  @Test
  void sidecarConfigIsMountedFromTheRepositoryAtThePathItsCommandNames() {
    for (String sidecar : SIDECARS.values()) {
      sidecarConfigIsMounted(service(sidecar));
    }
  }

  private void sidecarConfigIsMounted(JsonNode gospan) {
    List<String> command = texts(gospan.path("command"));
    int i = command.indexOf("--config");
    assertThat(i).as("gospan command %s has --config", command).isNotNegative();
    String configPath = command.get(i + 1);

    Map<String, String> mounts = new HashMap<>(); // container path -> host path
    for (JsonNode v : gospan.path("volumes")) {
      String[] parts = v.asText().split(":");
      assertThat(parts.length).as("short volume syntax: %s", v).isBetween(2, 3);
      mounts.put(parts[1], parts[0]);
      if (parts[0].startsWith(".")) {
        assertThat(root.resolve(parts[0]).normalize()).as("mounted %s", parts[0]).exists();
      }
    }
    assertThat(mounts).as("a volume at %s", configPath).containsKey(configPath);
    Path hostConfig = root.resolve(mounts.get(configPath)).normalize();
    assertThat(hostConfig).isRegularFile();

    // The mounted file is a valid gospan configuration exporting to the jaeger service.
    GospanConfig config = ConfigLoader.load(hostConfig, Map.of());
    URI endpoint = URI.create(config.exporter().otlp().endpoint());
    assertThat(endpoint.getHost()).isEqualTo("jaeger");
    assertThat(endpoint.getPort()).isEqualTo(4317);
    // it traces both services' programs (each gospan sees only its own) and links them
    assertThat(config.discovery().instrument()).anySatisfy(sel -> assertThat(sel.name()).isNotNull()
        .satisfies(n -> assertThat("greeter-server").matches(n)).satisfies(n -> assertThat("greeter-client").matches(n)));
    assertThat(config.link().enabled()).isTrue();

    // The environment's endpoint (which wins over the file) agrees.
    String env = environment(gospan).get("OTEL_EXPORTER_OTLP_ENDPOINT");
    assertThat(env).isEqualTo("http://jaeger:4317");
    assertThat(fieldNames(services)).contains(URI.create(env).getHost());
  }

  @Test
  void builtImagesHaveTheirDockerfiles() {
    int builds = 0;
    for (var it = services.fields(); it.hasNext(); ) {
      var e = it.next();
      JsonNode build = e.getValue().path("build");
      if (build.isMissingNode()) {
        continue;
      }
      builds++;
      String context = build.isTextual() ? build.asText() : build.path("context").asText(".");
      String dockerfile = build.isTextual() ? "Dockerfile" : build.path("dockerfile").asText("Dockerfile");
      Path dir = root.resolve(context).normalize();
      assertThat(dir).as("%s build context", e.getKey()).isDirectory();
      assertThat(dir.resolve(dockerfile)).as("%s Dockerfile", e.getKey()).isRegularFile();
    }
    assertThat(builds).isGreaterThanOrEqualTo(2);
    assertThat(service("gospan-server").path("build").path("dockerfile").asText()).isEqualTo("receiver/Dockerfile");
    assertThat(service("greeter-server").path("build").asText()).isEqualTo("./examples");
    // Every service without a build section uses a published image, or one another service
    // builds (and depends on it, so that it is built first).
    Map<String, String> builtBy = new HashMap<>();
    services.fields().forEachRemaining(e -> {
      if (!e.getValue().path("build").isMissingNode()) {
        builtBy.put(e.getValue().path("image").asText(), e.getKey());
      }
    });
    List<String> withoutBuild = new ArrayList<>();
    services.fields().forEachRemaining(e -> {
      if (e.getValue().path("build").isMissingNode()) {
        withoutBuild.add(e.getKey());
        String image = e.getValue().path("image").asText();
        if (builtBy.containsKey(image)) {
          assertThat(dependsOn(e.getValue())).as("%s uses %s, built by", e.getKey(), image).contains(builtBy.get(image));
        } else {
          assertThat(image).as("%s image", e.getKey()).contains("/");
        }
      }
    });
    assertThat(withoutBuild).as("services that use an image they do not build").contains("jaeger");
  }

  @Test
  void receiverDockerfileRunsTheFatJarWithTheMountedConfig() throws IOException {
    String df = Files.readString(root.resolve("receiver/Dockerfile"));
    List<String> stages = List.of(df.split("(?m)^FROM "));
    assertThat(stages).hasSize(3); // preamble + build + runtime
    String build = stages.get(1);
    String runtime = stages.get(2);
    assertThat(build).contains("clang", "libbpf-dev", "bpftool", "maven", "openjdk-17-jdk");
    assertThat(build).contains("receiver/target/gospan.jar");
    assertThat(build).contains("jlink");
    assertThat(runtime).contains("COPY --from=build /jre /opt/java").contains("libbpf1").contains("libcapstone4");
    assertThat(runtime).contains("/opt/gospan/gospan.jar");
    assertThat(runtime).containsPattern("ENTRYPOINT \\[\"java\", (\"-X[^\"]+\", )*\"-jar\", \"/opt/gospan/gospan.jar\"\\]");
    assertThat(runtime).contains("\"-Xmx128m\""); // the settings docs/benchmarks.md measured
    assertThat(runtime).contains("CMD [\"run\", \"--config\", \"/etc/gospan/gospan.yaml\"]");
    // What the build copies exists.
    for (String src : copiedSources(build)) {
      assertThat(root.resolve(src)).as("COPY %s", src).exists();
    }
    for (String src : copiedSources(runtime)) {
      assertThat(root.resolve(src)).as("COPY %s", src).exists();
    }
  }

  @Test
  void examplesDockerfileBuildsWithBuildSh() throws IOException {
    Path examples = root.resolve("examples");
    String df = Files.readString(examples.resolve("Dockerfile"));
    assertThat(df).contains("./build.sh").contains("greeter-server").contains("greeter-client");
    assertThat(examples.resolve("build.sh")).isExecutable();
    // the Go line of go.mod and the golang image agree
    String goLine = Files.readAllLines(examples.resolve("go.mod")).stream()
        .filter(l -> l.startsWith("go "))
        .findFirst()
        .orElseThrow();
    Matcher m = Pattern.compile("^go (\\d+\\.\\d+)").matcher(goLine);
    assertThat(m.find()).isTrue();
    // the toolchain the build stage fetches is that Go release
    assertThat(df).containsPattern("(?m)^ARG GO_TOOLCHAIN=go" + Pattern.quote(m.group(1)) + "\\.\\d+$");
  }

  /**
   * Every stage of both Dockerfiles starts from a build argument whose default is a public Debian
   * image, one scripts/container-images.sh bootstraps where no registry serves it: the Dockerfiles
   * users build are the ones CI builds.
   */
  @Test
  void baseImagesAreBuildArgumentsDefaultingToImagesTheImageScriptBootstraps() throws IOException {
    String script = Files.readString(root.resolve("scripts/container-images.sh"));
    for (String file : List.of("receiver/Dockerfile", "examples/Dockerfile", "scripts/jaeger.Dockerfile")) {
      String df = Files.readString(root.resolve(file));
      Map<String, String> args = new HashMap<>();
      Matcher a = Pattern.compile("(?m)^ARG (\\w+)=(\\S+)$").matcher(df);
      while (a.find()) {
        args.put(a.group(1), a.group(2));
      }
      Matcher f = Pattern.compile("(?m)^FROM (\\S+)").matcher(df);
      int froms = 0;
      while (f.find()) {
        froms++;
        String from = f.group(1);
        assertThat(from).as("%s: FROM %s names a build argument", file, from).matches("\\$\\{\\w+\\}");
        String image = args.get(from.substring(2, from.length() - 1));
        assertThat(image).as("%s: default of %s", file, from).isIn("debian:bookworm", "debian:bookworm-slim");
        assertThat(script).as("scripts/container-images.sh bootstraps %s", image)
            .containsPattern("(?m)^bootstrap docker\\.io/library/" + Pattern.quote(image) + "( |$)");
      }
      assertThat(froms).as("%s stages", file).isPositive();
    }
  }

  /** Debian's docker-compose 1.29 (what ComposeIT runs) refuses a top-level name: .env names the project. */
  @Test
  void theProjectIsNamedByDotEnvNotByATopLevelName() throws IOException {
    JsonNode compose = new YAMLMapper().readTree(root.resolve("docker-compose.yml").toFile());
    assertThat(fieldNames(compose)).containsExactly("services");
    assertThat(Files.readAllLines(root.resolve(".env"))).contains("COMPOSE_PROJECT_NAME=gospan-demo");
  }

  @Test
  void jaegerPublishesOtlpGrpcAndTheUi() {
    Set<Integer> published = new HashSet<>();
    for (JsonNode p : service("jaeger").path("ports")) {
      if (p.isObject()) {
        published.add(p.path("target").asInt());
      } else {
        String[] parts = p.asText().split(":");
        published.add(Integer.parseInt(parts[parts.length - 1].replaceAll("/.*", "")));
      }
    }
    assertThat(published).contains(4317, 16686);
    assertThat(service("jaeger").path("image").asText()).startsWith("jaegertracing/jaeger:2.");
  }

  @Test
  void clientCallsTheServerServiceOnTheServersPortWithAllRpcKindsInALoop() {
    List<String> server = texts(service("greeter-server").path("command"));
    String listen = flag(server, "-addr");
    assertThat(listen).as("server listens on all interfaces").startsWith("0.0.0.0:");
    String serverPort = listen.substring(listen.lastIndexOf(':') + 1);

    List<String> client = texts(service("greeter-client").path("command"));
    String target = flag(client, "-addr");
    assertThat(target).isEqualTo("greeter-server:" + serverPort);
    assertThat(fieldNames(services)).contains(target.substring(0, target.lastIndexOf(':')));
    assertThat(flag(client, "-n")).isEqualTo("0");
    assertThat(flag(client, "-rate")).isEqualTo("5");
    assertThat(flag(client, "-rpc")).isEqualTo("all");
    assertThat(client.get(0)).isEqualTo("greeter-client");
    assertThat(server.get(0)).isEqualTo("greeter-server");
  }

  // --- helpers ---------------------------------------------------------------

  static String flag(List<String> args, String name) {
    int i = args.indexOf(name);
    assertThat(i).as("%s in %s", name, args).isNotNegative();
    assertThat(i + 1).as("%s has a value in %s", name, args).isLessThan(args.size());
    return args.get(i + 1);
  }

  static Set<String> fieldNames(JsonNode object) {
    Set<String> names = new HashSet<>();
    object.fieldNames().forEachRemaining(names::add);
    return names;
  }

  static List<String> texts(JsonNode node) {
    List<String> out = new ArrayList<>();
    if (node.isArray()) {
      node.forEach(n -> out.add(n.asText()));
    } else if (node.isTextual()) {
      out.addAll(List.of(node.asText().trim().split("\\s+")));
    }
    return out;
  }

  private static Set<String> upper(List<String> values) {
    Set<String> out = new HashSet<>();
    values.forEach(v -> out.add(v.toUpperCase().replaceFirst("^CAP_", "")));
    return out;
  }

  /** depends_on in its list form or its map form ({@code name: {condition: ...}}). */
  private static List<String> dependsOn(JsonNode service) {
    JsonNode d = service.path("depends_on");
    return d.isObject() ? new ArrayList<>(fieldNames(d)) : texts(d);
  }

  /** environment in its map form or its list form ({@code KEY=value}). */
  private static Map<String, String> environment(JsonNode service) {
    Map<String, String> env = new HashMap<>();
    JsonNode e = service.path("environment");
    if (e.isObject()) {
      e.fields().forEachRemaining(f -> env.put(f.getKey(), f.getValue().asText()));
    } else {
      e.forEach(n -> {
        String[] kv = n.asText().split("=", 2);
        env.put(kv[0], kv.length > 1 ? kv[1] : "");
      });
    }
    return env;
  }

  /** The sources of the COPY instructions without --from, relative to the build context. */
  private static List<String> copiedSources(String stage) {
    List<String> out = new ArrayList<>();
    for (String line : stage.split("\n")) {
      line = line.strip();
      if (!line.startsWith("COPY ") || line.contains("--from=")) {
        continue;
      }
      String[] parts = line.substring(5).strip().split("\\s+");
      for (int i = 0; i < parts.length - 1; i++) {
        if (!parts[i].startsWith("--")) {
          out.add(parts[i]);
        }
      }
    }
    return out;
  }
}
