package io.gospan.receiver.span;

import io.gospan.receiver.event.ProcessInfo;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.sdk.resources.Resource;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds each traced process's resource from {@code /proc/<pid>}:
 *
 * <ul>
 *   <li>{@code service.name}: the process's own {@code OTEL_SERVICE_NAME}, else {@code service.name}
 *       in its {@code OTEL_RESOURCE_ATTRIBUTES}, else the executable's file name ({@code environ});
 *   <li>the rest of its {@code OTEL_RESOURCE_ATTRIBUTES};
 *   <li>{@code process.pid}, {@code process.executable.name}, {@code process.executable.path}
 *       ({@code exe} link, or what the inspector supplied), {@code process.runtime.name} = go,
 *       {@code process.runtime.version} (from {@link ProcessInfo#goVersion()});
 *   <li>{@code host.name} (gospan's host), {@code container.id} (the 64-hex id in {@code cgroup});
 *   <li>in a Kubernetes pod, {@code k8s.pod.uid} and {@code k8s.container.name}: from the
 *       kubelet's bind mounts in {@code mountinfo} ({@link KubeletMounts}).
 * </ul>
 *
 * <p>Precedence, lowest first: gospan's configured resource attributes, the process's own
 * {@code OTEL_RESOURCE_ATTRIBUTES}, the facts above. Reading another process's {@code environ} needs
 * the same user or {@code CAP_SYS_PTRACE}; when it fails the executable name is used.
 *
 * <p>gospan's configured attributes that describe a pod ({@code k8s.*} but {@code k8s.node.*} and
 * {@code k8s.cluster.*}: in a sidecar, its own pod's name, uid and namespace from the Downward API)
 * are given only to processes of gospan's own pod when gospan runs in one: a process whose
 * kubelet mounts name another pod, or none, does not get them (a gospan with the host's PID
 * namespace sees other pods' processes too).
 */
public final class ProcFsProcessMetadata implements ProcessMetadata {
  private static final Logger log = LoggerFactory.getLogger(ProcFsProcessMetadata.class);

  static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");
  static final AttributeKey<Long> PROCESS_PID = AttributeKey.longKey("process.pid");
  static final AttributeKey<String> PROCESS_EXECUTABLE_NAME = AttributeKey.stringKey("process.executable.name");
  static final AttributeKey<String> PROCESS_EXECUTABLE_PATH = AttributeKey.stringKey("process.executable.path");
  static final AttributeKey<String> PROCESS_RUNTIME_NAME = AttributeKey.stringKey("process.runtime.name");
  static final AttributeKey<String> PROCESS_RUNTIME_VERSION = AttributeKey.stringKey("process.runtime.version");
  static final AttributeKey<String> HOST_NAME = AttributeKey.stringKey("host.name");
  static final AttributeKey<String> CONTAINER_ID = AttributeKey.stringKey("container.id");
  static final AttributeKey<String> K8S_POD_UID = AttributeKey.stringKey("k8s.pod.uid");
  static final AttributeKey<String> K8S_CONTAINER_NAME = AttributeKey.stringKey("k8s.container.name");

  // docker-<id>.scope, cri-containerd-<id>.scope, crio-<id>.scope, /docker/<id>, /kubepods/.../<id>
  private static final Pattern CONTAINER_ID_IN_CGROUP = Pattern.compile("(?:^|[/:.-])([0-9a-f]{64})(?:\\.scope)?(?:$|/)");

  private final Path procRoot;
  private final Map<String, String> configAttributes;
  private final String hostName;
  /** The pod gospan runs in ({@code <procRoot>/self/mountinfo}), {@code null} outside Kubernetes. */
  private final String ownPodUid;
  private final Map<Integer, ProcessInfo> infos = new ConcurrentHashMap<>();
  private final Map<Integer, ProcessInfo> hints = new ConcurrentHashMap<>();
  private final Map<Integer, Resource> cache = new ConcurrentHashMap<>();
  /** When each cache entry was built ({@link System#nanoTime()}). */
  private final Map<Integer, Long> cachedAt = new ConcurrentHashMap<>();
  /**
   * The last resource looked up per {@code pid & 63}, in front of {@link #cache}: a span's look-up
   * without boxing its pid or a map operation. A memo holds while {@link #generation} has not moved
   * since it was made; every change to {@link #cache} moves it.
   */
  private final Memo[] memos = new Memo[64];
  private final AtomicInteger generation = new AtomicInteger();

  private record Memo(int pid, Resource resource, int generation) {}

  /**
   * @param procRoot normally {@code /proc}
   * @param configAttributes {@code resource.attributes} from the config (with {@code OTEL_RESOURCE_ATTRIBUTES} of gospan itself)
   * @param hostName value of {@code host.name}, {@code null} to read {@code <procRoot>/sys/kernel/hostname}
   */
  public ProcFsProcessMetadata(Path procRoot, Map<String, String> configAttributes, String hostName) {
    this.procRoot = procRoot;
    this.configAttributes = Map.copyOf(configAttributes);
    this.hostName = hostName != null ? hostName : readHostName(procRoot);
    this.ownPodUid = KubeletMounts.read(procRoot.resolve("self")).podUid();
  }

  /** Reads the real {@code /proc}. */
  public static ProcFsProcessMetadata create(Map<String, String> configAttributes) {
    return new ProcFsProcessMetadata(Path.of("/proc"), configAttributes, null);
  }

  @Override
  public void register(ProcessInfo info) {
    infos.put(info.pid(), info);
    hints.remove(info.pid());
    uncache(info.pid());
  }

  @Override
  public void hint(ProcessInfo info) {
    if (!infos.containsKey(info.pid())) {
      hints.put(info.pid(), info);
      uncache(info.pid());
      cachedAt.put(info.pid(), System.nanoTime());
    }
  }

  @Override
  public Resource resource(int pid) {
    // called once per span
    int g = generation.get(); // before the cache is read: a change to it from now on voids the memo made below
    Memo m = memos[pid & (memos.length - 1)];
    if (m != null && m.pid == pid && m.generation == g) {
      return m.resource;
    }
    Resource r = cache.get(pid); // first: without the lambda computeIfAbsent would allocate
    if (r == null) {
      r = cache.computeIfAbsent(pid, p -> {
        cachedAt.put(p, System.nanoTime());
        return build(p);
      });
    }
    memos[pid & (memos.length - 1)] = new Memo(pid, r, g);
    return r;
  }

  /** Removes {@code pid}'s cached resource, and voids every memo. */
  private void uncache(int pid) {
    cache.remove(pid);
    generation.incrementAndGet();
  }

  @Override
  public void sweep(java.time.Duration minAge) {
    long cutoff = System.nanoTime() - minAge.toNanos();
    for (Map.Entry<Integer, Long> e : cachedAt.entrySet()) {
      int pid = e.getKey();
      if (!infos.containsKey(pid) && e.getValue() < cutoff && !Files.exists(procRoot.resolve(Integer.toString(pid)))) {
        uncache(pid);
        hints.remove(pid);
        cachedAt.remove(pid);
      }
    }
  }

  @Override
  public void forget(int pid) {
    infos.remove(pid);
    hints.remove(pid);
    uncache(pid);
    cachedAt.remove(pid);
  }

  @Override
  public int size() {
    return Math.max(infos.size(), cache.size());
  }

  private Resource build(int pid) {
    ProcessInfo info = infos.getOrDefault(pid, hints.getOrDefault(pid, ProcessInfo.of(pid)));
    Path dir = procRoot.resolve(Integer.toString(pid));

    String exePath = info.executable() != null ? info.executable().toString() : null;
    if (exePath == null) {
      try {
        exePath = Files.readSymbolicLink(dir.resolve("exe")).toString();
        if (exePath.endsWith(" (deleted)")) {
          exePath = exePath.substring(0, exePath.length() - " (deleted)".length());
        }
      } catch (IOException | UnsupportedOperationException e) {
        log.debug("pid {}: cannot read exe link: {}", pid, e.toString());
      }
    }
    String exeName = exePath != null ? Path.of(exePath).getFileName().toString() : readComm(dir);

    Map<String, String> environ = readEnviron(dir);
    Map<String, String> own = new LinkedHashMap<>();
    String ownAttrs = environ.get("OTEL_RESOURCE_ATTRIBUTES");
    if (ownAttrs != null) {
      own.putAll(parseResourceAttributes(ownAttrs));
    }

    KubeletMounts pod = KubeletMounts.read(dir);
    boolean ownPod = ownPodUid == null || ownPodUid.equals(pod.podUid());
    AttributesBuilder b = Attributes.builder();
    configAttributes.forEach((k, v) -> {
      if (ownPod || !describesAPod(k)) {
        b.put(k, v);
      }
    });
    own.forEach(b::put);
    String serviceName = environ.get("OTEL_SERVICE_NAME");
    if (serviceName == null || serviceName.isBlank()) {
      serviceName = own.get("service.name");
    }
    if (serviceName == null || serviceName.isBlank()) {
      serviceName = exeName != null ? exeName : "unknown_service:go";
    }
    b.put(SERVICE_NAME, serviceName);
    b.put(PROCESS_PID, (long) pid);
    if (exeName != null) {
      b.put(PROCESS_EXECUTABLE_NAME, exeName);
    }
    if (exePath != null) {
      b.put(PROCESS_EXECUTABLE_PATH, exePath);
    }
    b.put(PROCESS_RUNTIME_NAME, "go");
    if (info.goVersion() != null) {
      b.put(PROCESS_RUNTIME_VERSION, info.goVersion());
    }
    if (hostName != null) {
      b.put(HOST_NAME, hostName);
    }
    String containerId = readContainerId(dir);
    if (containerId != null) {
      b.put(CONTAINER_ID, containerId);
    }
    if (pod.podUid() != null) {
      b.put(K8S_POD_UID, pod.podUid());
    }
    if (pod.containerName() != null) {
      b.put(K8S_CONTAINER_NAME, pod.containerName());
    }
    return Resource.create(b.build());
  }

  /** A {@code k8s.*} attribute of one pod (its name, uid, namespace, workload, container), not of its node or cluster. */
  static boolean describesAPod(String key) {
    return key.startsWith("k8s.") && !key.startsWith("k8s.node.") && !key.startsWith("k8s.cluster.");
  }

  private static String readComm(Path dir) {
    try {
      return Files.readString(dir.resolve("comm"), StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      return null;
    }
  }

  static Map<String, String> readEnviron(Path dir) {
    Map<String, String> env = new HashMap<>();
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(dir.resolve("environ"));
    } catch (IOException e) {
      log.debug("cannot read {}/environ: {}", dir, e.toString());
      return env;
    }
    int start = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i == bytes.length || bytes[i] == 0) {
        if (i > start) {
          String kv = new String(bytes, start, i - start, StandardCharsets.UTF_8);
          int eq = kv.indexOf('=');
          if (eq > 0 && kv.startsWith("OTEL_")) {
            env.put(kv.substring(0, eq), kv.substring(eq + 1));
          }
        }
        start = i + 1;
      }
    }
    return env;
  }

  /** {@code OTEL_RESOURCE_ATTRIBUTES} syntax: {@code k=v,k2=v2}, values percent-encoded; bad items skipped. */
  static Map<String, String> parseResourceAttributes(String text) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String item : text.split(",")) {
      int eq = item.indexOf('=');
      if (eq <= 0) {
        continue;
      }
      String k = item.substring(0, eq).trim();
      String v = item.substring(eq + 1).trim();
      try {
        v = URLDecoder.decode(v.replace("+", "%2B"), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        continue;
      }
      if (!k.isEmpty()) {
        out.put(k, v);
      }
    }
    return out;
  }

  static String readContainerId(Path dir) {
    try {
      for (String line : Files.readAllLines(dir.resolve("cgroup"), StandardCharsets.UTF_8)) {
        int colon = line.indexOf(':', line.indexOf(':') + 1);
        String path = colon >= 0 ? line.substring(colon + 1) : line;
        Matcher m = CONTAINER_ID_IN_CGROUP.matcher(path);
        String last = null;
        while (m.find()) {
          last = m.group(1);
        }
        if (last != null) {
          return last;
        }
      }
    } catch (IOException e) {
      log.debug("cannot read {}/cgroup: {}", dir, e.toString());
    }
    return null;
  }

  private static String readHostName(Path procRoot) {
    try {
      return Files.readString(procRoot.resolve("sys/kernel/hostname"), StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      try {
        return java.net.InetAddress.getLocalHost().getHostName();
      } catch (IOException e2) {
        return null;
      }
    }
  }
}
