package io.gospan.receiver.span;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pod and container a process runs in, as the kubelet's bind mounts show them in {@code
 * /proc/<pid>/mountinfo}: the kubelet keeps a directory per pod, {@code <root-dir>/pods/<pod
 * uid>/} ({@code /var/lib/kubelet} by default), and mounts files from it into every container:
 *
 * <ul>
 *   <li>the container's termination-message file, {@code pods/<pod uid>/containers/<container
 *       name>/<8 hex digits>}, at its {@code terminationMessagePath} ({@code
 *       /dev/termination-log} unless the manifest sets it to another path or empty; kubelet
 *       v1.31 {@code pkg/kubelet/kuberuntime/kuberuntime_container.go}, {@code makeMounts}):
 *       pod uid and container name;
 *   <li>{@code pods/<pod uid>/etc-hosts} at {@code /etc/hosts}, and volumes from {@code
 *       pods/<pod uid>/volumes/} ({@code pkg/kubelet/kubelet_pods.go}): the pod uid.
 * </ul>
 *
 * <p>The 4th field of a {@code mountinfo} line (the mount's root within its file system) holds
 * that path, relative to the file system the kubelet's directory is on: {@code
 * /var/lib/kubelet/pods/...} on the root file system, {@code /pods/...} when the directory is a
 * file system of its own. Needs no API access and no privilege beyond reading {@code mountinfo}.
 * A process outside Kubernetes (or under a runtime that mounts none of these) gets {@link #NONE}.
 *
 * @param podUid {@code metadata.uid} of the pod (36 characters with dashes; a static pod's is 32
 *     hex digits), or {@code null}
 * @param containerName the container's {@code name} in the pod spec, or {@code null}
 */
record KubeletMounts(String podUid, String containerName) {
  private static final Logger log = LoggerFactory.getLogger(KubeletMounts.class);

  static final KubeletMounts NONE = new KubeletMounts(null, null);

  private static final String UID = "([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})";
  /** A container name is a DNS-1123 label (pkg/apis/core/validation). */
  private static final Pattern CONTAINER_FILE =
      Pattern.compile("(?:^|/)pods/" + UID + "/containers/([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)/[0-9a-f]{8}$");
  private static final Pattern POD_FILE = Pattern.compile("(?:^|/)pods/" + UID + "/(?:etc-hosts$|volumes/)");

  /** Reads {@code <dir>/mountinfo} ({@code dir} is {@code /proc/<pid>} or {@code /proc/self}); {@link #NONE} if unreadable. */
  static KubeletMounts read(Path dir) {
    try {
      return parse(Files.readAllLines(dir.resolve("mountinfo"), StandardCharsets.UTF_8));
    } catch (IOException | RuntimeException e) {
      log.debug("cannot read {}/mountinfo: {}", dir, e.toString());
      return NONE;
    }
  }

  /**
   * The pod and container in {@code mountinfo} lines ({@code proc(5)}: {@code id parent major:minor
   * root mount-point options ...}). A container file wins over a pod file; mounts that name two
   * different pods name none (a host path volume of another pod's directory, not this pod's).
   */
  static KubeletMounts parse(List<String> lines) {
    String uid = null;
    String container = null;
    boolean conflict = false;
    for (String line : lines) {
      String[] f = line.split(" ", 6);
      if (f.length < 5) {
        continue;
      }
      String root = f[3];
      Matcher c = CONTAINER_FILE.matcher(root);
      String u = null;
      if (c.find()) {
        u = c.group(1);
        if (container == null) {
          container = c.group(2);
        } else if (!container.equals(c.group(2))) {
          conflict = true;
        }
      } else {
        Matcher p = POD_FILE.matcher(root);
        if (p.find()) {
          u = p.group(1);
        }
      }
      if (u != null) {
        if (uid == null) {
          uid = u;
        } else if (!uid.equals(u)) {
          conflict = true;
        }
      }
    }
    if (conflict) {
      return NONE;
    }
    return uid == null ? NONE : new KubeletMounts(uid, container);
  }
}
