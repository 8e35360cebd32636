package io.gospan.receiver.discovery;

import io.gospan.receiver.probe.ExeKey;
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
}
