package io.gospan.receiver.discovery;

import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Which processes gospan may trace, before inspection: include rules (any matches; none given =
 * everything) minus exclude rules (any matches). Go and grpc-go are checked afterwards by
 * inspecting the binary. Rules follow Beyla's {@code discovery.instrument} style.
 */
public final class ProcessSelector {

  /**
   * One rule: every non-null criterion must hold.
   *
   * @param exePathGlob glob on the executable's path, e.g. {@code /usr/local/bin/*}
   * @param nameRegex regex that must match the executable's whole file name
   * @param openPort the process has a TCP socket listening on this port
   * @param containerId the process's cgroup path contains this container id (or prefix of it)
   */
  public record Rule(String exePathGlob, String nameRegex, Integer openPort, String containerId) {
    public Rule {
      if (nameRegex != null) {
        Pattern.compile(nameRegex); // fail at config time, not at scan time
      }
    }

    boolean matches(ProcessEntry p, ProcFs procFs) {
      if (exePathGlob != null) {
        PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + exePathGlob);
        if (!m.matches(Path.of(stripDeleted(p.exePath())))) {
          return false;
        }
      }
      String fileName = Path.of(stripDeleted(p.exePath())).getFileName().toString();
      if (nameRegex != null && !Pattern.compile(nameRegex).matcher(fileName).matches()) {
        return false;
      }
      if (openPort != null && !procFs.listeningPorts(p.pid()).contains(openPort)) {
        return false;
      }
      return containerId == null || procFs.cgroup(p.pid()).contains(containerId);
    }
  }

  private final List<Rule> include;
  private final List<Rule> exclude;

  public ProcessSelector(List<Rule> include, List<Rule> exclude) {
    this.include = List.copyOf(include);
    this.exclude = List.copyOf(exclude);
  }

  /** Everything (the default: every Go process that links grpc-go). */
  public static ProcessSelector all() {
    return new ProcessSelector(List.of(), List.of());
  }

  /**
   * Whether include rules name the processes to trace (not the default "everything"): a selected
   * process that is then not traced deserves a word at INFO, once per binary.
   */
  public boolean namesProcesses() {
    return !include.isEmpty();
  }

  public boolean matches(ProcessEntry p, ProcFs procFs) {
    boolean in = include.isEmpty() || include.stream().anyMatch(r -> r.matches(p, procFs));
    return in && exclude.stream().noneMatch(r -> r.matches(p, procFs));
  }

  static String stripDeleted(String path) {
    return path.endsWith(" (deleted)") ? path.substring(0, path.length() - " (deleted)".length()) : path;
  }
}
