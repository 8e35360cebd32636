package io.gospan.receiver.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code examples/k8s/} on a real Kubernetes: a single-node v1.31 cluster on this machine
 * ({@code scripts/k8s-cluster.sh}: the control plane and kubelet built from the Go module proxy,
 * Debian's containerd, runc and CNI plugins, kube-proxy in nftables mode, CoreDNS), the images
 * built from the repository's Dockerfiles ({@code scripts/container-images.sh}) and imported into
 * the node's containerd, the manifests applied as the README says. Asserted through the Jaeger of
 * {@code jaeger.yaml}, reached at its Service's ClusterIP:
 *
 * <ul>
 *   <li>the client (calling {@code greeter-server:50051}, the Service's ClusterIP) and the server
 *       are traced by their pods' sidecars, and for ≥ 99 % of the calls in a 60 s window the
 *       client span is the parent of the server span: one trace across the two pods;
 *   <li>every span's resource names its pod (the Downward API's name, namespace, node, uid) and
 *       its container ({@code k8s.container.name} of the traced container);
 *   <li>{@code kubectl logs} of a sidecar shows the line the README shows; both sidecars count
 *       the links on {@code /metrics};
 *   <li>after {@code scripts/k8s-cluster.sh down} nothing of the cluster is left on the host
 *       (the script's own check: processes, mounts, interfaces, nftables tables, directories,
 *       cgroups, sysctls) and no BPF program, map or link is left that no process holds.
 * </ul>
 *
 * <p>Anything that cannot run (no package, no image, a component that does not start) fails
 * with the command's output. Takes the cluster lock's machine for ~3 minutes plus the builds
 * (cached: Kubernetes ~4 minutes of 2 cores the first time on a machine, the images ~3 minutes).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubernetesIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final Path REPO = ExampleApps.repoRoot();
  private static final Path CLUSTER = REPO.resolve("scripts/k8s-cluster.sh");
  private static final Path MANIFESTS = REPO.resolve("examples/k8s");
  private static final Duration WINDOW = Duration.ofSeconds(60);
  /** streams.link_wait (2 s) + the batch processor's 5 s + Jaeger's ingestion. */
  private static final Duration SETTLE_MIN = Duration.ofSeconds(10);
  /** How much longer the last calls' spans may take before the count is final. */
  private static final Duration SETTLE_MAX = Duration.ofSeconds(30);
  private static final String NODE = "gospan-k8s";

  private static boolean clusterStarted;
  private static BpfObjects bpfBefore;
  /** The query API of jaeger.yaml's Jaeger, at its Service's ClusterIP (kube-proxy routes the node's own connections too). */
  private static String jaegerUrl;
  private static final Map<String, String> timings = new java.util.LinkedHashMap<>();

  @BeforeAll
  static void clusterWithTheExampleApplied() {
    bpfBefore = BpfObjects.now();
    timed("install", () -> {
      sh(900, CLUSTER.toString(), "install");
      sh(900, REPO.resolve("scripts/install-container-engine.sh").toString());
    });
    timed("images", () -> sh(3600, REPO.resolve("scripts/container-images.sh").toString()));
    timed("build", () -> sh(3600, CLUSTER.toString(), "build"));
    clusterStarted = true; // from here on, down must run: it also takes down a cluster half up
    timed("up", () -> sh(600, CLUSTER.toString(), "up"));
    // The images the manifests name, from podman's store into the node's containerd.
    List<String> cmd = new ArrayList<>(List.of(CLUSTER.toString(), "import"));
    cmd.addAll(imagesOfTheManifests());
    timed("import", () -> sh(900, cmd.toArray(String[]::new)));
    timed("apply", () -> {
      // as examples/k8s/README.md says
      kubectl("label", "namespace", "default", "pod-security.kubernetes.io/enforce=privileged", "--overwrite");
      kubectl("apply", "-f", MANIFESTS.resolve("jaeger.yaml").toString());
      rollout("jaeger");
      kubectl("apply", "-f", MANIFESTS.resolve("greeter-with-gospan.yaml").toString());
      rollout("greeter-server");
      rollout("greeter-client");
    });
    jaegerUrl = "http://" + clusterIp("jaeger") + ":16686";
  }

  @AfterAll
  static void takeDownAndCheckTheHost() {
    if (!clusterStarted) {
      return;
    }
    timed("down", () -> sh(600, CLUSTER.toString(), "down")); // exits non-zero (a failure) if anything is left
    System.out.println("KubernetesIT timings: " + timings);
    // Every BPF program, map and link a sidecar loaded went with its process: none is left that
    // no process holds (other processes on the machine may load their own meanwhile).
    List<BpfObjects.BpfObject> orphans = BpfObjects.now().objects().stream()
        .filter(o -> o.pids().isEmpty() && bpfBefore.objects().stream().noneMatch(b -> b.kind().equals(o.kind()) && b.id() == o.id()))
        .toList();
    assertThat(orphans).as("BPF objects loaded during the test that no process holds").isEmpty();
  }

  @Test
  @Order(1)
  void theSidecarLogsWhatTheReadmeShows() {
    // README: `tracing pid 7 (/usr/local/bin/greeter-server): go1.26.8, grpc-go v1.85.0, offsets from dwarf, probes attached [...]`
    for (String app : List.of("greeter-server", "greeter-client")) {
      Pattern line = Pattern.compile("tracing pid \\d+ \\(/usr/local/bin/" + app
          + "\\): go1\\.\\d+[^,]*, grpc-go v\\d+\\.\\d+\\.\\d+, offsets from dwarf, probes attached \\[");
      String logs = awaitLogs(app, line);
      assertThat(logs).as("kubectl logs deployment/%s -c gospan", app).containsPattern(line);
    }
  }

  @Test
  @Order(2)
  void eachCallIsOneTraceAcrossTheTwoPodsSidecarsThroughTheServiceClusterIp() throws InterruptedException {
    Pod server = pod("greeter-server");
    Pod client = pod("greeter-client");
    String serviceIp = clusterIp("greeter-server");
    // warm-up: the first whole trace (the sidecars attach after the programs start)
    long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
    while (calls(nowMicros() - 120_000_000L, nowMicros()).stream().noneMatch(Call::linked)) {
      assertThat(System.nanoTime()).as("a first whole trace within 180 s; " + diagnostics()).isLessThan(deadline);
      Thread.sleep(1000);
    }

    long start = nowMicros();
    Thread.sleep(WINDOW.toMillis());
    long end = nowMicros();
    // the spans of the window's last calls reach Jaeger within link_wait + the batch delay
    Thread.sleep(SETTLE_MIN.toMillis());
    List<Call> calls = calls(start, end);
    long settle = System.nanoTime() + SETTLE_MAX.toNanos();
    while (calls.stream().filter(Call::linked).count() < Math.ceil(0.99 * calls.size()) && System.nanoTime() < settle) {
      Thread.sleep(2000);
      calls = calls(start, end);
    }
    long linked = calls.stream().filter(Call::linked).count();
    System.out.printf("KubernetesIT: %d calls in %d s, %d (%.2f %%) one trace across the two pods%n",
        calls.size(), WINDOW.toSeconds(), linked, 100.0 * linked / Math.max(1, calls.size()));
    // 5 calls/s (the client's -rate 5): a window without most of them means the load or the sidecar stalled
    assertThat(calls.size()).as("client spans in the %d s window", WINDOW.toSeconds()).isGreaterThanOrEqualTo(250);
    assertThat(linked).as("calls whose client span is the parent of the server span").isGreaterThanOrEqualTo(
        (long) Math.ceil(0.99 * calls.size()));

    Set<String> methods = new HashSet<>();
    for (Call c : calls) {
      methods.add(c.client.path("operationName").asText());
      // the client dialled the Service's ClusterIP; kube-proxy's DNAT left the client's address as it was
      assertThat(tag(c.client, "network.peer.address")).as("client span's peer").isEqualTo(serviceIp);
      if (c.server != null) {
        assertThat(tag(c.server, "network.peer.address")).as("server span's peer").isEqualTo(client.ip);
      }
    }
    assertThat(methods).containsExactlyInAnyOrder("greeter.Greeter/SayHello", "greeter.Greeter/SayHelloServerStream",
        "greeter.Greeter/SayHelloClientStream", "greeter.Greeter/SayHelloBidi");

    // every span names its pod and the container traced
    for (Call c : calls) {
      assertResource(c.trace, c.client, client, "greeter-client");
      if (c.server != null) {
        assertResource(c.trace, c.server, server, "greeter-server");
      }
    }

    // /metrics of the two sidecars (README: the link counters)
    assertThat(metric(server.ip, "gospan_link_spans_linked_total")).as("server sidecar: spans linked").isPositive();
    assertThat(metric(server.ip, "gospan_link_lookups_answered_total")).as("server sidecar: look-ups answered").isPositive();
    assertThat(metric(client.ip, "gospan_link_queries_served_total")).as("client sidecar: queries served").isPositive();
  }

  // ---------------------------------------------------------------------------------------------

  /** One client span of the window, its trace, and the server span whose parent it is (or null). */
  record Call(JsonNode trace, JsonNode client, JsonNode server) {
    boolean linked() {
      return server != null;
    }
  }

  /** The greeter-client's client spans that started in [start, end) µs, each with its server child if any. */
  private static List<Call> calls(long startMicros, long endMicros) {
    // Jaeger's UI API (the shapes: Jaeger#traces): whole traces with a greeter-client span in the range
    JsonNode root = json(get(jaegerUrl + "/api/traces?service=greeter-client&start=" + startMicros + "&end=" + endMicros
        + "&limit=100000"));
    List<Call> calls = new ArrayList<>();
    for (JsonNode trace : root.path("data")) {
      for (JsonNode span : trace.path("spans")) {
        long t = span.path("startTime").asLong();
        if (!"client".equals(tag(span, "span.kind")) || !"greeter-client".equals(service(trace, span))
            || t < startMicros || t >= endMicros) {
          continue;
        }
        JsonNode child = null;
        for (JsonNode s : trace.path("spans")) {
          if ("server".equals(tag(s, "span.kind")) && "greeter-server".equals(service(trace, s))) {
            for (JsonNode ref : s.path("references")) {
              if ("CHILD_OF".equals(ref.path("refType").asText())
                  && ref.path("spanID").asText().equals(span.path("spanID").asText())) {
                child = s;
              }
            }
          }
        }
        calls.add(new Call(trace, span, child));
      }
    }
    return calls;
  }

  private static void assertResource(JsonNode trace, JsonNode span, Pod pod, String container) {
    Map<String, String> r = processTags(trace, span);
    String what = service(trace, span) + " span " + span.path("spanID").asText() + " resource " + r;
    assertThat(r).as(what)
        .containsEntry("k8s.pod.name", pod.name)
        .containsEntry("k8s.namespace.name", "default")
        .containsEntry("k8s.node.name", NODE)
        .containsEntry("k8s.pod.uid", pod.uid)
        .containsEntry("k8s.container.name", container)
        .containsEntry("process.executable.path", "/usr/local/bin/" + container)
        .containsKey("container.id");
  }

  private static String tag(JsonNode span, String key) {
    for (JsonNode t : span.path("tags")) {
      if (t.path("key").asText().equals(key)) {
        return t.path("value").asText();
      }
    }
    return null;
  }

  private static String service(JsonNode trace, JsonNode span) {
    return trace.path("processes").path(span.path("processID").asText()).path("serviceName").asText();
  }

  private static Map<String, String> processTags(JsonNode trace, JsonNode span) {
    Map<String, String> tags = new HashMap<>();
    trace.path("processes").path(span.path("processID").asText()).path("tags")
        .forEach(t -> tags.put(t.path("key").asText(), t.path("value").asText()));
    return tags;
  }

  record Pod(String name, String uid, String ip) {}

  private static Pod pod(String app) {
    JsonNode items = json(kubectl("get", "pods", "-l", "app.kubernetes.io/name=" + app, "-o", "json")).path("items");
    assertThat(items.size()).as("pods of %s", app).isEqualTo(1);
    JsonNode p = items.get(0);
    assertThat(p.path("spec").path("nodeName").asText()).isEqualTo(NODE);
    return new Pod(p.path("metadata").path("name").asText(), p.path("metadata").path("uid").asText(),
        p.path("status").path("podIP").asText());
  }

  private static String clusterIp(String service) {
    String ip = kubectl("get", "service", service, "-o", "jsonpath={.spec.clusterIP}").strip();
    assertThat(ip).as("ClusterIP of %s", service).matches("\\d+\\.\\d+\\.\\d+\\.\\d+");
    return ip;
  }

  /** A counter of a sidecar's /metrics (telemetry port 9464 on the pod's address), summed over its labels. */
  private static double metric(String podIp, String name) {
    String body = get("http://" + podIp + ":9464/metrics");
    double sum = 0;
    boolean found = false;
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? ([0-9.eE+-]+)$").matcher(body);
    while (m.find()) {
      sum += Double.parseDouble(m.group(2));
      found = true;
    }
    assertThat(found).as("%s on %s:9464/metrics:\n%s", name, podIp, body).isTrue();
    return sum;
  }

  private static String get(String url) {
    try {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as("GET %s: %s", url, r.body()).isEqualTo(200);
      return r.body();
    } catch (IOException e) {
      throw new AssertionError("GET " + url + ": " + e + diagnostics(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static String awaitLogs(String app, Pattern line) {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    String logs;
    do {
      logs = kubectl("logs", "deployment/" + app, "-c", "gospan");
      if (line.matcher(logs).find()) {
        break;
      }
      sleep(1000);
    } while (System.nanoTime() < deadline);
    return logs;
  }

  /** The images the manifests' containers name (gospan:dev, gospan-examples:dev, jaegertracing/jaeger:2.13.0). */
  private static List<String> imagesOfTheManifests() {
    Set<String> images = new LinkedHashSet<>();
    try {
      for (String f : List.of("jaeger.yaml", "greeter-with-gospan.yaml")) {
        for (JsonNode d : K8sManifestsTest.documents(MANIFESTS.resolve(f))) {
          for (JsonNode c : K8sManifestsTest.podSpec(d).path("containers")) {
            images.add(c.path("image").asText());
          }
        }
      }
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    images.remove("");
    assertThat(images).hasSize(3);
    return new ArrayList<>(images);
  }

  private static void rollout(String deployment) {
    try {
      kubectl("rollout", "status", "deployment/" + deployment, "--timeout=180s");
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "\n" + diagnostics(), e);
    }
  }

  /** What the cluster says about the example's pods, for a failure's message. */
  private static String diagnostics() {
    StringBuilder b = new StringBuilder("\n== kubectl get pods,services -o wide\n");
    try {
      b.append(kubectl("get", "pods,services,endpointslices", "-o", "wide"));
      b.append("\n== events\n").append(kubectl("get", "events", "--sort-by=.lastTimestamp"));
      for (String app : List.of("greeter-server", "greeter-client", "jaeger")) {
        for (String c : List.of(app, "gospan")) {
          if (!app.equals("jaeger") || c.equals(app)) {
            b.append("\n== logs ").append(app).append(" -c ").append(c).append('\n');
            try {
              String l = kubectl("logs", "deployment/" + app, "-c", c, "--tail=40");
              b.append(l);
            } catch (AssertionError e) {
              b.append(e.getMessage());
            }
          }
        }
      }
    } catch (AssertionError e) {
      b.append(e.getMessage());
    }
    return b.toString();
  }

  static String kubectl(String... args) {
    List<String> cmd = new ArrayList<>(List.of(CLUSTER.toString(), "kubectl"));
    cmd.addAll(List.of(args));
    return ExampleApps.run(cmd, 240);
  }

  /** Runs a command; fails with its output when it exits non-zero. */
  private static String sh(int timeoutSeconds, String... cmd) {
    return ExampleApps.run(List.of(cmd), timeoutSeconds);
  }

  private static JsonNode json(String s) {
    try {
      return JSON.readTree(s);
    } catch (IOException e) {
      throw new AssertionError("not JSON: " + s, e);
    }
  }

  private static void timed(String what, Runnable r) {
    long t0 = System.nanoTime();
    try {
      r.run();
    } finally {
      timings.put(what, (System.nanoTime() - t0) / 1_000_000_000 + " s");
      System.out.printf("KubernetesIT: %s took %d s%n", what, (System.nanoTime() - t0) / 1_000_000_000);
    }
  }

  private static long nowMicros() {
    return System.currentTimeMillis() * 1000;
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
