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
  }

  /** What a selector says of a process now. */
  enum Verdict {
    /** Selected: inspect it, and trace it if it links grpc-go. */
    TRACE,
    /** Not selected. */
    IGNORE,
    /**
     * Not selected yet: an include rule holds but for its {@code open_port}, which the process does
     * not listen on (yet: a server may listen long after its exec). Judge it again later.
     */
    AWAIT_PORT,
    /**
     * Cannot be told from an exec notice alone (the process is gone): a rule that would select it also
     * names a {@code container_id} or an {@code open_port}, which only the live process shows, or an
     * exclude rule that might hold names a {@code container_id}.
     */
    NEEDS_PROCESS
  }

  /** A rule with its glob and regex compiled once. */
  private record Compiled(Rule rule, PathMatcher exePath, Pattern name) {
    static Compiled of(Rule r) {
      return new Compiled(
          r,
          r.exePathGlob() == null ? null : FileSystems.getDefault().getPathMatcher("glob:" + r.exePathGlob()),
          r.nameRegex() == null ? null : Pattern.compile(r.nameRegex()));
    }

    /** TRACE when every criterion holds, AWAIT_PORT when all but the port do, else IGNORE. */
    Verdict judge(ProcessEntry p, ProcFs procFs, PortLookup ports) {
      Path exe = Path.of(stripDeleted(p.exePath()));
      if (exePath != null && !exePath.matches(exe)) {
        return Verdict.IGNORE;
      }
      Path fileName = exe.getFileName();
      if (name != null && (fileName == null || !name.matcher(fileName.toString()).matches())) {
        return Verdict.IGNORE;
      }
      if (rule.containerId() != null && !procFs.cgroup(p.pid()).contains(rule.containerId())) {
        return Verdict.IGNORE;
      }
      if (rule.openPort() != null && !ports.listens(p.pid(), rule.openPort())) {
        return Verdict.AWAIT_PORT;
      }
      return Verdict.TRACE;
    }

    /**
     * TRACE when the path and the name hold and nothing else is asked, NEEDS_PROCESS when they hold and
     * a criterion of the live process is asked too, else IGNORE. {@code asExclude}: an exclude rule's
     * {@code open_port} cannot hold for a process that is gone (it listens on nothing), so it does not
     * hold; its {@code container_id} can, unknown.
     */
    Verdict judgeExecutable(Path exe, boolean asExclude) {
      if (exePath != null && !exePath.matches(exe)) {
        return Verdict.IGNORE;
      }
      Path fileName = exe.getFileName();
      if (name != null && (fileName == null || !name.matcher(fileName.toString()).matches())) {
        return Verdict.IGNORE;
      }
      if (asExclude && rule.openPort() != null) {
        return Verdict.IGNORE;
      }
      return rule.containerId() != null || rule.openPort() != null ? Verdict.NEEDS_PROCESS : Verdict.TRACE;
    }
  }

  private final List<Compiled> include;
  private final List<Compiled> exclude;

  public ProcessSelector(List<Rule> include, List<Rule> exclude) {
    this.include = include.stream().map(Compiled::of).toList();
    this.exclude = exclude.stream().map(Compiled::of).toList();
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

  /**
   * Judges a process now: TRACE when an include rule holds (or none is given) and no exclude rule
   * does; AWAIT_PORT when no include rule holds yet but one would once the process listens on its
   * {@code open_port}, and no exclude rule holds. An exclude rule's {@code open_port} counts only
   * while the process listens on it.
   *
   * @param ports this look's port lookup (one per scan: namespaces' socket tables read once)
   */
  Verdict judge(ProcessEntry p, ProcFs procFs, PortLookup ports) {
    Verdict in = include.isEmpty() ? Verdict.TRACE : Verdict.IGNORE;
    for (Compiled r : include) {
      Verdict v = r.judge(p, procFs, ports);
      if (v == Verdict.TRACE) {
        in = v;
        break;
      }
      if (v == Verdict.AWAIT_PORT) {
        in = v;
      }
    }
    if (in == Verdict.IGNORE) {
      return in;
    }
    for (Compiled r : exclude) {
      if (r.judge(p, procFs, ports) == Verdict.TRACE) {
        return Verdict.IGNORE;
      }
    }
    return in;
  }

  /**
   * Judges a process known only by its executable's path ({@code exe}, from its exec notice: the
   * process is gone): TRACE when an include rule holds on the path and the name alone (or none is
   * given) and no exclude rule can hold; NEEDS_PROCESS when the answer depends on what only the live
   * process shows ({@code container_id}, {@code open_port}); else IGNORE.
   */
  Verdict judgeExecutable(Path exe) {
    Verdict in = include.isEmpty() ? Verdict.TRACE : Verdict.IGNORE;
    for (Compiled r : include) {
      Verdict v = r.judgeExecutable(exe, false);
      if (v == Verdict.TRACE) {
        in = v;
        break;
      }
      if (v == Verdict.NEEDS_PROCESS) {
        in = v;
      }
    }
    if (in == Verdict.IGNORE) {
      return in;
    }
    for (Compiled r : exclude) {
      Verdict v = r.judgeExecutable(exe, true);
      if (v == Verdict.TRACE) {
        return Verdict.IGNORE;
      }
      if (v == Verdict.NEEDS_PROCESS) {
        in = v;
      }
    }
    return in;
  }

  static String stripDeleted(String path) {
    return path.endsWith(" (deleted)") ? path.substring(0, path.length() - " (deleted)".length()) : path;
  }
}
