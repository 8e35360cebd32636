package io.gospan.receiver.event;

import java.nio.file.Path;

/**
 * What the inspector knows about a traced process, handed to span assembly when the process is
 * attached. Anything else (environment, cgroup) is read from {@code /proc} by
 * {@code io.gospan.receiver.span.ProcFsProcessMetadata}.
 *
 * @param pid process id
 * @param executable path of the executable as gospan resolved it, {@code null} = read {@code /proc/<pid>/exe}
 * @param goVersion Go version from the binary's buildinfo, e.g. {@code go1.22.3}; {@code null} = unknown
 */
public record ProcessInfo(int pid, Path executable, String goVersion) {

  public static ProcessInfo of(int pid) {
    return new ProcessInfo(pid, null, null);
  }
}
