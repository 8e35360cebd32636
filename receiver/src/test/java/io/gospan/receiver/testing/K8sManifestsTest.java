package io.gospan.receiver.testing;

import static io.gospan.receiver.testing.DockerComposeTest.flag;
import static io.gospan.receiver.testing.DockerComposeTest.texts;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.gospan.receiver.config.ConfigLoader;
import io.gospan.receiver.config.GospanConfig;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes example (examples/k8s/) is consistent: the sidecar shares the pod's process
 * namespace with the capabilities it needs, its ConfigMap is mounted where its arguments look,
 * the configuration is valid and points at a Service that exists, and the greeter Service and
 * client agree on names and ports. No cluster is needed: the manifests are parsed.
 */
class K8sManifestsTest {
  private static Path dir;
  private static List<JsonNode> greeter;
  private static List<JsonNode> jaeger;
  private static List<JsonNode> tempo;

  @BeforeAll
  static void load() throws IOException {
    dir = ExampleApps.repoRoot().resolve("examples/k8s");
    greeter = documents(dir.resolve("greeter-with-gospan.yaml"));
    jaeger = documents(dir.resolve("jaeger.yaml"));
    tempo = documents(dir.resolve("tempo-snippet.yaml"));
  }

  static List<JsonNode> documents(Path file) throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    try (MappingIterator<JsonNode> it = new YAMLMapper().readerFor(JsonNode.class).readValues(file.toFile())) {
      while (it.hasNext()) {
        JsonNode d = it.next();
        if (d != null && !d.isNull() && !d.isMissingNode()) {
          assertThat(d.path("apiVersion").asText()).as("%s: apiVersion of %s", file, d).isNotEmpty();
          assertThat(d.path("kind").asText()).as("%s: kind", file).isNotEmpty();
          assertThat(d.path("metadata").path("name").asText()).as("%s: metadata.name", file).isNotEmpty();
          docs.add(d);
        }
      }
    }
    assertThat(docs).as("%s has documents", file).isNotEmpty();
    return docs;
  }

  static Optional<JsonNode> find(List<JsonNode> docs, String kind, String name) {
    return docs.stream()
        .filter(d -> d.path("kind").asText().equals(kind) && d.path("metadata").path("name").asText().equals(name))
        .findFirst();
  }

  static JsonNode get(List<JsonNode> docs, String kind, String name) {
    return find(docs, kind, name).orElseThrow(() -> new AssertionError("no " + kind + " " + name));
  }

  /** The pod spec of a Deployment, or the spec of a Pod. */
  static JsonNode podSpec(JsonNode workload) {
    return workload.path("kind").asText().equals("Pod") ? workload.path("spec") : workload.path("spec").path("template").path("spec");
  }

  static JsonNode container(JsonNode podSpec, String name) {
    for (JsonNode c : podSpec.path("containers")) {
      if (c.path("name").asText().equals(name)) {
        return c;
      }
    }
    throw new AssertionError("no container " + name + " in " + podSpec);
  }

  /**
   * The workloads (Deployment or Pod) whose pod runs a gospan sidecar (a container with {@code
   * --config}): the server's and the client's, asserted, so that no loop over them passes empty.
   */
  private static List<JsonNode> sidecarWorkloads() {
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode d : greeter) {
      if (!Set.of("Deployment", "Pod").contains(d.path("kind").asText())) {
        continue;
      }
      for (JsonNode c : podSpec(d).path("containers")) {
        if (texts(c.path("args")).contains("--config")) {
          out.add(d);
        }
      }
    }
    assertThat(out).extracting(w -> w.path("metadata").path("name").asText())
        .as("workloads with a gospan sidecar").containsExactlyInAnyOrder("greeter-server", "greeter-client");
    return out;
  }

  @Test
  void bothPodsHaveTheSidecarWithTheCapabilitiesItNeeds() {
    List<JsonNode> workloads = sidecarWorkloads();
    assertThat(workloads).extracting(w -> w.path("metadata").path("name").asText())
        .containsExactlyInAnyOrder("greeter-server", "greeter-client");
    for (JsonNode w : workloads) {
      String app = w.path("metadata").path("name").asText();
      sidecarSharesTheProcessNamespaceWithTheCapabilitiesItNeeds(podSpec(w), app);
    }
  }

  @Test
  void theSidecarsServeTheLinkPortTheyAskEachOtherAt() throws IOException {
    for (JsonNode w : sidecarWorkloads()) {
      JsonNode spec = podSpec(w);
      assertThat(spec.path("hostNetwork").asBoolean(false)).as("the link service listens in the pod's network").isFalse();
      JsonNode gospan = container(spec, "gospan");
      Path config = java.nio.file.Files.createTempFile("gospan-k8s", ".yaml");
      JsonNode cm = get(greeter, "ConfigMap", "gospan-config");
      java.nio.file.Files.writeString(config, cm.path("data").path("gospan.yaml").asText());
      var parsed = io.gospan.receiver.config.ConfigLoader.load(config, java.util.Map.of());
      assertThat(parsed.link().enabled()).isTrue();
      int port = Integer.parseInt(parsed.link().listen().substring(parsed.link().listen().lastIndexOf(':') + 1));
      assertThat(containerPorts(gospan)).as("%s sidecar ports", w.path("metadata").path("name").asText()).containsEntry("link", port);
    }
  }

  private void sidecarSharesTheProcessNamespaceWithTheCapabilitiesItNeeds(JsonNode spec, String app) {
    assertThat(spec.path("shareProcessNamespace").asBoolean(false)).as("shareProcessNamespace").isTrue();
    assertThat(spec.path("hostPID").asBoolean(false)).as("no hostPID: the pod's namespace is enough").isFalse();

    JsonNode gospan = container(spec, "gospan");
    JsonNode sc = gospan.path("securityContext");
    if (!sc.path("privileged").asBoolean(false)) {
      Set<String> caps = new HashSet<>(texts(sc.path("capabilities").path("add")));
      assertThat(caps).as("sidecar capabilities").containsAll(DockerComposeTest.SIDECAR_CAPS);
      // Runtimes keep DAC_OVERRIDE by default, but a policy that drops it would break /proc reads.
      assertThat(caps).contains("DAC_READ_SEARCH");
      assertThat(texts(sc.path("capabilities").path("drop"))).doesNotContain("ALL");
    }
    assertThat(sc.path("runAsNonRoot").asBoolean(false)).isFalse();
    if (sc.has("runAsUser")) {
      assertThat(sc.path("runAsUser").asInt()).isZero();
    }
    // The traced program runs in the same pod.
    JsonNode traced = container(spec, app);
    assertThat(texts(traced.path("args")).get(0)).isEqualTo(app);
  }

  @Test
  void configMapKeyIsMountedAtThePathTheSidecarReads() {
    for (JsonNode w : sidecarWorkloads()) {
      configMapKeyIsMountedAtThePathTheSidecarReads(w);
    }
  }

  private void configMapKeyIsMountedAtThePathTheSidecarReads(JsonNode workload) {
    JsonNode spec = podSpec(workload);
    JsonNode gospan = container(spec, "gospan");
    String configPath = flag(texts(gospan.path("args")), "--config");

    String resolved = null;
    String configMapName = null;
    String key = null;
    for (JsonNode m : gospan.path("volumeMounts")) {
      String mountPath = m.path("mountPath").asText();
      JsonNode volume = null;
      for (JsonNode v : spec.path("volumes")) {
        if (v.path("name").asText().equals(m.path("name").asText())) {
          volume = v;
        }
      }
      assertThat(volume).as("volume %s of mount %s", m.path("name").asText(), mountPath).isNotNull();
      JsonNode cm = volume.path("configMap");
      if (cm.isMissingNode()) {
        continue;
      }
      if (m.has("subPath")) {
        if (mountPath.equals(configPath)) {
          resolved = mountPath;
          configMapName = cm.path("name").asText();
          key = m.path("subPath").asText();
        }
        continue;
      }
      if (cm.has("items")) {
        for (JsonNode item : cm.path("items")) {
          if ((mountPath + "/" + item.path("path").asText()).equals(configPath)) {
            resolved = configPath;
            configMapName = cm.path("name").asText();
            key = item.path("key").asText();
          }
        }
      } else if (configPath.startsWith(mountPath + "/")) {
        resolved = configPath;
        configMapName = cm.path("name").asText();
        key = configPath.substring(mountPath.length() + 1);
      }
    }
    assertThat(resolved).as("a ConfigMap volume mounted at %s", configPath).isEqualTo(configPath);

    JsonNode configMap = get(greeter, "ConfigMap", configMapName);
    assertThat(configMap.path("data").has(key)).as("ConfigMap %s has key %s", configMapName, key).isTrue();
    GospanConfig config = ConfigLoader.parse(configMap.path("data").path(key).asText(), "ConfigMap " + configMapName, Map.of());

    // The endpoint is the Jaeger Service of jaeger.yaml, on its OTLP gRPC port.
    URI endpoint = URI.create(config.exporter().otlp().endpoint());
    JsonNode service = get(jaeger, "Service", endpoint.getHost().split("\\.")[0]);
    assertThat(servicePorts(service)).contains(endpoint.getPort());

    // tempo-snippet.yaml replaces the same ConfigMap key with a valid config for Tempo.
    JsonNode tempoMap = get(tempo, "ConfigMap", configMapName);
    GospanConfig tempoConfig = ConfigLoader.parse(tempoMap.path("data").path(key).asText(), "tempo-snippet.yaml", Map.of());
    URI tempoEndpoint = URI.create(tempoConfig.exporter().otlp().endpoint());
    assertThat(tempoEndpoint.getHost()).contains("tempo");
    assertThat(tempoEndpoint.getPort()).isEqualTo(4317);
  }

  @Test
  void clientServiceAndServerAgreeOnNamesAndPorts() {
    JsonNode serverWorkload = get(greeter, "Deployment", "greeter-server");
    JsonNode spec = podSpec(serverWorkload);
    JsonNode server = container(spec, "greeter-server");
    String listen = flag(texts(server.path("args")), "-addr");
    assertThat(listen).startsWith("0.0.0.0:");
    int listenPort = Integer.parseInt(listen.substring(listen.lastIndexOf(':') + 1));
    assertThat(containerPorts(server)).containsValue(listenPort);

    JsonNode service = get(greeter, "Service", "greeter-server");
    assertSelects(service, serverWorkload);
    JsonNode port = service.path("spec").path("ports").get(0);
    JsonNode target = port.path("targetPort");
    int targetPort = target.isInt() ? target.asInt() : containerPorts(server).getOrDefault(target.asText(), -1);
    assertThat(targetPort).isEqualTo(listenPort);

    JsonNode client = container(podSpec(get(greeter, "Deployment", "greeter-client")), "greeter-client");
    List<String> args = texts(client.path("args"));
    assertThat(flag(args, "-addr")).isEqualTo("greeter-server:" + port.path("port").asInt());
    assertThat(flag(args, "-n")).isEqualTo("0");
    assertThat(flag(args, "-rpc")).isEqualTo("all");
  }

  @Test
  void jaegerServiceSelectsJaegerAndExposesOtlpAndTheUi() {
    JsonNode deployment = get(jaeger, "Deployment", "jaeger");
    JsonNode service = get(jaeger, "Service", "jaeger");
    assertSelects(service, deployment);
    assertThat(servicePorts(service)).contains(4317, 16686);
    JsonNode c = container(podSpec(deployment), "jaeger");
    assertThat(c.path("image").asText()).startsWith("jaegertracing/jaeger:2.");
    assertThat(containerPorts(c).values()).contains(4317, 16686);
  }

  @Test
  void deploymentsSelectTheirOwnPods() {
    List<String> checked = new ArrayList<>();
    for (List<JsonNode> docs : List.of(greeter, jaeger)) {
      for (JsonNode d : docs) {
        if (d.path("kind").asText().equals("Deployment")) {
          checked.add(d.path("metadata").path("name").asText());
          JsonNode labels = d.path("spec").path("template").path("metadata").path("labels");
          d.path("spec").path("selector").path("matchLabels").fields().forEachRemaining(e ->
              assertThat(labels.path(e.getKey()).asText()).as("%s selector %s", d.path("metadata").path("name"), e.getKey())
                  .isEqualTo(e.getValue().asText()));
        }
      }
    }
    assertThat(checked).containsExactlyInAnyOrder("greeter-server", "greeter-client", "jaeger");
  }

  /**
   * Each sidecar names its pod on every span: OTEL_RESOURCE_ATTRIBUTES from the Downward API
   * (the kubelet expands {@code $(VAR)} from variables defined before it); gospan adds the traced
   * container's name and the pod uid from the kubelet's mounts (KubeletMounts).
   */
  @Test
  void theSidecarsNameTheirPodFromTheDownwardApi() {
    Map<String, String> fieldPaths = Map.of("k8s.pod.name", "metadata.name", "k8s.namespace.name", "metadata.namespace",
        "k8s.pod.uid", "metadata.uid", "k8s.node.name", "spec.nodeName");
    for (JsonNode w : sidecarWorkloads()) {
      JsonNode gospan = container(podSpec(w), "gospan");
      Map<String, String> fromField = new java.util.HashMap<>();
      String attributes = null;
      for (JsonNode e : gospan.path("env")) {
        String name = e.path("name").asText();
        if (name.equals("OTEL_RESOURCE_ATTRIBUTES")) {
          attributes = e.path("value").asText();
        } else if (e.path("valueFrom").has("fieldRef")) {
          assertThat(attributes).as("%s is defined before OTEL_RESOURCE_ATTRIBUTES uses it", name).isNull();
          fromField.put(name, e.path("valueFrom").path("fieldRef").path("fieldPath").asText());
        }
      }
      assertThat(attributes).as("%s: OTEL_RESOURCE_ATTRIBUTES of the sidecar", w.path("metadata").path("name")).isNotNull();
      Map<String, String> pairs = new java.util.HashMap<>();
      for (String kv : attributes.split(",")) {
        pairs.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
      }
      fieldPaths.forEach((attribute, fieldPath) -> {
        String value = pairs.get(attribute);
        assertThat(value).as(attribute).matches("\\$\\([A-Z_]+\\)");
        assertThat(fromField.get(value.substring(2, value.length() - 1))).as(attribute).isEqualTo(fieldPath);
      });
    }
  }

  /** No registry needed: the local images are used when the node has them (imported, or built there). */
  @Test
  void localImagesArePulledOnlyWhenTheNodeLacksThem() {
    List<String> seen = new ArrayList<>();
    for (List<JsonNode> docs : List.of(greeter, jaeger)) {
      for (JsonNode d : docs) {
        for (JsonNode c : podSpec(d).path("containers")) {
          String image = c.path("image").asText();
          seen.add(image);
          if (image.endsWith(":dev")) {
            assertThat(c.path("imagePullPolicy").asText()).as(image).isIn("IfNotPresent", "Never");
          }
        }
      }
    }
    assertThat(seen).contains("gospan:dev", "gospan-examples:dev");
  }

  @Test
  void readmeNamesEveryManifest() throws IOException {
    String readme = Files.readString(dir.resolve("README.md"));
    assertThat(readme).contains("jaeger.yaml", "greeter-with-gospan.yaml", "tempo-snippet.yaml", "kubectl apply");
  }

  @Test
  void readmeSaysWhatLinksAcrossPodsAndWhatDoesNot() throws IOException {
    // LinkAcrossNamespacesIT shows the ClusterIP (DNAT) case linked and an absent peer unlinked;
    // LinkServiceTest a link port in use (hostNetwork pods on one node)
    String readme = Files.readString(dir.resolve("README.md"));
    assertThat(readme).contains("one trace", "ClusterIP", "source NAT", "hostNetwork", "without a gospan sidecar", "9465",
        "link.tls");
    JsonNode client = podSpec(get(greeter, "Deployment", "greeter-client"));
    assertThat(flag(texts(container(client, "greeter-client").path("args")), "-addr"))
        .as("the client calls the Service (its ClusterIP), not a pod").startsWith("greeter-server:");
  }

  private static void assertSelects(JsonNode service, JsonNode workload) {
    JsonNode labels = workload.path("spec").path("template").path("metadata").path("labels");
    JsonNode selector = service.path("spec").path("selector");
    assertThat(selector.size()).isPositive();
    selector.fields().forEachRemaining(e ->
        assertThat(labels.path(e.getKey()).asText()).as("Service %s selector %s", service.path("metadata").path("name"), e.getKey())
            .isEqualTo(e.getValue().asText()));
  }

  private static Set<Integer> servicePorts(JsonNode service) {
    Set<Integer> ports = new HashSet<>();
    service.path("spec").path("ports").forEach(p -> ports.add(p.path("port").asInt()));
    return ports;
  }

  private static Map<String, Integer> containerPorts(JsonNode container) {
    Map<String, Integer> ports = new java.util.HashMap<>();
    container.path("ports").forEach(p -> ports.put(p.path("name").asText(), p.path("containerPort").asInt()));
    return ports;
  }
}
