package io.gospan.receiver.discovery;

import io.gospan.receiver.probe.ExeKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process as the scan saw it.
 *
 * @param pid process id in gospan's pid namespace
 * @param exe {@code /proc/<pid>/exe}: opens the executable even in another mount namespace or
 *     after it was deleted or replaced on disk
 * @param exePath where the link points, as the kernel names it (may end in " (deleted)")
 * @param key device + inode of the executable
 * @param comm the process name ({@code /proc/<pid>/comm})
 */
public record ProcessEntry(int pid, Path exe, String exePath, ExeKey key, String comm) {

  /** The executable's path without the kernel's " (deleted)" suffix. */
  public Path executable() {
    return Path.of(ProcessSelector.stripDeleted(exePath));
  }

  /**
   * A path to the executable: {@code /proc/<pid>/exe} while the process lives (works across
   * mount namespaces), else the executable's own path when it is the same file (device and
   * inode) in ours, so a short-lived process that exits during inspection still gets its binary
   * inspected and attached (its next run is then traced from its first call).
   */
  public Path reachable() {
    if (Files.exists(exe)) {
      return exe;
    }
    try {
      if (!exePath.endsWith(" (deleted)") && ExeKey.of(executable()).equals(key)) {
        return executable();
      }
    } catch (IOException | RuntimeException e) {
      // not reachable from this mount namespace
    }
    return exe;
  }
}
