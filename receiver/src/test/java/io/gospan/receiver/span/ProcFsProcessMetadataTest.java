package io.gospan.receiver.span;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.receiver.event.ProcessInfo;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.resources.Resource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcFsProcessMetadataTest {
  static final String ID = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899";

  @TempDir Path proc;

  Path process(int pid, String environ, String cgroup, String exe) throws Exception {
    Path dir = Files.createDirectories(proc.resolve(Integer.toString(pid)));
    Files.write(dir.resolve("environ"), environ.replace('|', '\0').getBytes(StandardCharsets.UTF_8));
    Files.writeString(dir.resolve("cgroup"), cgroup);
    Files.writeString(dir.resolve("comm"), "greeter-serv\n");
    if (exe != null) {
      Path target = Files.createDirectories(proc.resolve("bin")).resolve(exe);
      Files.writeString(target, "");
      Files.createSymbolicLink(dir.resolve("exe"), target);
    }
    return dir;
  }

  static String attr(Resource r, String key) {
    Object v = r.getAttributes().get(AttributeKey.stringKey(key));
    return v == null ? null : v.toString();
  }

  @Test
  void serviceNameFromTheProcessOwnEnvironment() throws Exception {
    process(42, "PATH=/bin|OTEL_SERVICE_NAME=checkout|OTEL_RESOURCE_ATTRIBUTES=service.name=ignored,team=pay%20ments|HOME=/",
        "0::/system.slice/docker-" + ID + ".scope\n", "greeter-server");
    ProcFsProcessMetadata m = new ProcFsProcessMetadata(proc, Map.of("deployment.environment.name", "dev", "team", "cfg"), "node-1");
    m.register(new ProcessInfo(42, null, "go1.22.3"));
    Resource r = m.resource(42);
    assertThat(attr(r, "service.name")).isEqualTo("checkout");
    assertThat(attr(r, "team")).isEqualTo("pay ments"); // the process's own attributes beat the config's
    assertThat(attr(r, "deployment.environment.name")).isEqualTo("dev");
    assertThat(r.getAttributes().get(AttributeKey.longKey("process.pid"))).isEqualTo(42L);
    assertThat(attr(r, "process.executable.name")).isEqualTo("greeter-server");
    assertThat(attr(r, "process.executable.path")).endsWith("/bin/greeter-server");
    assertThat(attr(r, "process.runtime.name")).isEqualTo("go");
    assertThat(attr(r, "process.runtime.version")).isEqualTo("go1.22.3");
    assertThat(attr(r, "host.name")).isEqualTo("node-1");
    assertThat(attr(r, "container.id")).isEqualTo(ID);
  }

  @Test
  void serviceNameFallsBackToResourceAttributesThenExecutable() throws Exception {
    process(43, "OTEL_RESOURCE_ATTRIBUTES=service.name=from-attrs", "0::/\n", "a");
    process(44, "", "12:pids:/kubepods/burstable/pod1234/" + ID + "\n", "greeter-client");
    process(45, "", "0::/\n", null);
    ProcFsProcessMetadata m = new ProcFsProcessMetadata(proc, Map.of(), "h");
    assertThat(attr(m.resource(43), "service.name")).isEqualTo("from-attrs");
    assertThat(attr(m.resource(43), "container.id")).isNull();
    assertThat(attr(m.resource(44), "service.name")).isEqualTo("greeter-client");
    assertThat(attr(m.resource(44), "container.id")).isEqualTo(ID);
    assertThat(attr(m.resource(45), "service.name")).isEqualTo("greeter-serv"); // comm, when exe is unreadable
    assertThat(attr(m.resource(45), "process.runtime.version")).isNull();
  }

  @Test
  void missingProcessStillGetsAResourceAndForgetDropsIt() {
    ProcFsProcessMetadata m = new ProcFsProcessMetadata(proc, Map.of(), "h");
    Resource r = m.resource(99);
    assertThat(attr(r, "service.name")).isEqualTo("unknown_service:go");
    assertThat(m.size()).isEqualTo(1);
    m.register(new ProcessInfo(99, Path.of("/usr/bin/srv"), "go1.21.0"));
    assertThat(attr(m.resource(99), "service.name")).isEqualTo("srv");
    m.forget(99);
    assertThat(m.size()).isZero();
  }

  /** The per-span memo in front of the cache: pids sharing its slot, a pid reused by a new process. */
  @Test
  void eachPidGetsItsOwnResourceThroughTheMemo() throws Exception {
    process(7, "OTEL_SERVICE_NAME=seven", "0::/\n", "c");
    process(7 + 64, "OTEL_SERVICE_NAME=seventy-one", "0::/\n", "c"); // the same memo slot
    ProcFsProcessMetadata m = new ProcFsProcessMetadata(proc, Map.of(), "h");
    for (int i = 0; i < 3; i++) {
      assertThat(attr(m.resource(7), "service.name")).isEqualTo("seven");
      assertThat(attr(m.resource(71), "service.name")).isEqualTo("seventy-one");
      assertThat(m.resource(7)).isSameAs(m.resource(7));
    }
    m.forget(7);
    Files.write(proc.resolve("7").resolve("environ"), "OTEL_SERVICE_NAME=seven-again".getBytes(StandardCharsets.UTF_8));
    m.register(new ProcessInfo(7, null, "go1.23")); // a new process with the pid
    assertThat(attr(m.resource(7), "service.name")).isEqualTo("seven-again");
    assertThat(attr(m.resource(7), "process.runtime.version")).isEqualTo("go1.23");
  }

  @Test
  void sweepDropsExitedUnregisteredProcessesOnly() throws Exception {
    Path dead = process(50, "OTEL_SERVICE_NAME=short-lived", "0::/\n", "c");
    process(51, "OTEL_SERVICE_NAME=alive", "0::/\n", "c");
    process(52, "OTEL_SERVICE_NAME=registered", "0::/\n", "c");
    ProcFsProcessMetadata m = new ProcFsProcessMetadata(proc, Map.of(), "h");
    m.register(new ProcessInfo(52, null, "go1.22"));
    m.resource(50);
    m.resource(51);
    m.resource(52);
    assertThat(m.size()).isEqualTo(3);
    Files.walk(dead).sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    m.sweep(java.time.Duration.ofHours(1)); // too young: kept, its spans may still end
    assertThat(m.size()).isEqualTo(3);
    m.sweep(java.time.Duration.ZERO);
    assertThat(m.size()).isEqualTo(2); // 50 exited and was never registered
    assertThat(attr(m.resource(51), "service.name")).isEqualTo("alive");
  }

  @Test
  void containerIdFormats() throws Exception {
    for (String line :
        new String[] {
          "0::/system.slice/cri-containerd-" + ID + ".scope",
          "0::/kubepods.slice/kubepods-pod1.slice/crio-" + ID + ".scope",
          "1:name=systemd:/docker/" + ID,
        }) {
      Path dir = Files.createDirectories(proc.resolve("x" + line.hashCode()));
      Files.writeString(dir.resolve("cgroup"), line + "\n");
      assertThat(ProcFsProcessMetadata.readContainerId(dir)).as(line).isEqualTo(ID);
    }
  }

  static final String POD = "6f1c2b3a-9d8e-4c7b-a6f5-e4d3c2b1a098";

  void mountinfo(String pidOrSelf, String uid, String container) throws Exception {
    Path dir = Files.createDirectories(proc.resolve(pidOrSelf));
    Files.write(dir.resolve("mountinfo"), KubeletMountsTest.container("/var/lib/kubelet", uid, container));
  }

  /** A sidecar: its Downward API attributes (OTEL_RESOURCE_ATTRIBUTES) on its pod's processes, the container name of each. */
  @Test
  void inAPodTheSidecarsPodAttributesAndTheProcessContainerName() throws Exception {
    mountinfo("self", POD, "gospan");
    process(60, "OTEL_SERVICE_NAME=greeter-server", "0::/\n", "greeter-server");
    mountinfo("60", POD, "greeter-server");
    Map<String, String> downward = Map.of("k8s.pod.name", "greeter-server-5d9c", "k8s.namespace.name", "shop",
        "k8s.node.name", "node-a", "k8s.pod.uid", POD);
    ProcFsProcessMetadata m = new ProcFsProcessMetadata(proc, downward, "greeter-server-5d9c");
    Resource r = m.resource(60);
    assertThat(attr(r, "k8s.pod.name")).isEqualTo("greeter-server-5d9c");
    assertThat(attr(r, "k8s.namespace.name")).isEqualTo("shop");
    assertThat(attr(r, "k8s.node.name")).isEqualTo("node-a");
    assertThat(attr(r, "k8s.pod.uid")).isEqualTo(POD);
    assertThat(attr(r, "k8s.container.name")).isEqualTo("greeter-server"); // the traced container
  }

  /** A gospan that sees other pods' processes (the host's PID namespace) does not give them its own pod's name. */
  @Test
  void anotherPodsProcessKeepsOnlyTheNodeAttributes() throws Exception {
    mountinfo("self", POD, "gospan");
    String other = "11111111-2222-4333-8444-555555555555";
    process(61, "", "0::/\n", "greeter-client");
    mountinfo("61", other, "greeter-client");
    process(62, "", "0::/\n", "on-the-host"); // no kubelet mounts
    Map<String, String> config = Map.of("k8s.pod.name", "gospan-ds-x", "k8s.namespace.name", "obs", "k8s.node.name", "node-a",
        "k8s.cluster.name", "prod", "deployment.environment.name", "staging");
    ProcFsProcessMetadata m = new ProcFsProcessMetadata(proc, config, "node-a");
    Resource r = m.resource(61);
    assertThat(attr(r, "k8s.pod.uid")).isEqualTo(other);
    assertThat(attr(r, "k8s.container.name")).isEqualTo("greeter-client");
    assertThat(attr(r, "k8s.pod.name")).isNull();
    assertThat(attr(r, "k8s.namespace.name")).isNull();
    assertThat(attr(r, "k8s.node.name")).isEqualTo("node-a");
    assertThat(attr(r, "k8s.cluster.name")).isEqualTo("prod");
    assertThat(attr(r, "deployment.environment.name")).isEqualTo("staging");
    Resource host = m.resource(62);
    assertThat(attr(host, "k8s.pod.name")).isNull();
    assertThat(attr(host, "k8s.pod.uid")).isNull();
    assertThat(attr(host, "k8s.node.name")).isEqualTo("node-a");
  }

  /** Outside Kubernetes the configured attributes apply to every process, as before. */
  @Test
  void outsideAPodTheConfiguredAttributesApplyToEveryProcess() throws Exception {
    process(63, "", "0::/\n", "srv");
    ProcFsProcessMetadata m = new ProcFsProcessMetadata(proc, Map.of("k8s.namespace.name", "by-hand"), "h");
    assertThat(attr(m.resource(63), "k8s.namespace.name")).isEqualTo("by-hand");
    assertThat(attr(m.resource(63), "k8s.container.name")).isNull();
  }
}
