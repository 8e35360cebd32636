package io.gospan.receiver.cli;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.elf.NotRegularFileException;
import io.gospan.offsets.resolve.ConnTypes;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import io.gospan.receiver.discovery.BinaryInspection;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code gospan inspect <path|pid|dir>}: what gospan would do with a binary, or with each Go binary under a
 * directory ({@link InspectDirectory}), without loading BPF. A pre-deployment check; {@code --output json} for
 * machines ({@link InspectReport}).
 */
@Command(
    name = "inspect",
    description = {
      "Inspects a Go binary (or the executable of a running process) and tells which spans gospan will produce:",
      "Go and module versions, each probed function's address, each offset the probes need and its source",
      "(catalog, dwarf; for a binary without module information, what grpc-go's version was inferred from and how",
      "the value was checked) or why it is missing (a reason shared by several lines is printed once, with a count),",
      "and whether the calls the binary makes while serving one are linked to it (in-process propagation).",
      "With --config, as `gospan run --config` would trace it (offsets.prefer, and headers.allow, which needs the",
      "headers probe set; discovery.linger and discovery.hold_new_binaries: which runs of the binary are traced).",
      "Exit 0 when spans will be produced, 3 when none, 1 on a read error,",
      "2 when the path is a FIFO, socket or device (refused without being opened).",
      "A directory: every ELF Go binary under it (symbolic links and other file systems not followed), one line each;",
      "exit 0 when every Go binary that links grpc-go's transport will produce spans, 3 when one will not,",
      "1 when none fails but a file or directory could not be read (its verdict is unknown).",
      "--output json: one JSON document per binary (docs/inspect.md), one per line for a directory.",
      "Text read from the binary is printed with non-printable characters escaped (\\x1b, \\u202e)."
    })
public final class InspectCommand implements Callable<Integer> {

  /** The output formats. */
  public enum Output {
    /** For a person (docs/inspect.md). */
    TEXT,
    /** One JSON document per binary ({@link InspectReport}); a directory: one per line. */
    JSON
  }

  @picocli.CommandLine.Option(names = {"-h", "--help"}, usageHelp = true, description = "prints this help and exits 0")
  boolean help;

  @Parameters(paramLabel = "PATH|PID|DIR", description = "an executable, the pid of a running process, or a directory")
  String target;

  @picocli.CommandLine.Option(names = {"-c", "--config"}, paramLabel = "FILE",
      description = "the gospan.yaml `gospan run` uses (offsets.prefer, headers.allow, discovery.linger, discovery.hold_new_binaries)")
  Path config;

  @picocli.CommandLine.Option(names = {"-o", "--output"}, paramLabel = "FORMAT",
      description = "text (default) or json (one document per binary; schema: docs/inspect.md)")
  Output output = Output.TEXT;

  PrintStream out = System.out;
  PrintStream err = System.err;

  /**
   * What {@code gospan run --config} decides a binary's fate with: the offsets' preference, whether response headers
   * are captured, and the "runs traced" sentence.
   */
  record Settings(Preference preference, boolean responseHeaders, String runsTraced) {
    BinaryInspection inspect(Path path, GoBinary binary) throws GoBinaryException {
      return BinaryInspection.inspect(path, binary, preference, responseHeaders);
    }
  }

  @Override
  public Integer call() {
    Settings settings;
    try {
      settings = settings();
    } catch (io.gospan.receiver.config.ConfigException e) {
      err.println("gospan inspect: " + esc(e.getMessage()));
      return ExitCodes.USAGE;
    }
    boolean pid = target.chars().allMatch(Character::isDigit);
    Path path = pid ? Path.of("/proc", target, "exe") : Path.of(target);
    if (!pid && Files.isDirectory(path)) {
      return new InspectDirectory(settings, output, out, err).inspect(path);
    }
    try {
      // before anything opens it: a FIFO would block the open, a device could stream forever
      ElfFile.requireRegularFile(path);
    } catch (NotRegularFileException e) {
      return fail(path, ExitCodes.USAGE, esc(e.getMessage()));
    } catch (NoSuchFileException e) {
      return fail(path, ExitCodes.ERROR, esc(path) + " does not exist" + (path.startsWith("/proc") ? " (no such process?)" : ""));
    } catch (AccessDeniedException e) {
      return fail(path, ExitCodes.ERROR, "permission denied reading " + esc(path));
    } catch (IOException e) {
      return fail(path, ExitCodes.ERROR, "cannot read " + esc(path) + ": " + esc(e.getMessage()));
    }
    try (GoBinary binary = GoBinary.open(path)) {
      BinaryInspection inspection = settings.inspect(path, binary);
      if (output == Output.JSON) {
        out.println(InspectReport.of(inspection, settings.runsTraced()).json());
        return inspection.producesSpans() ? ExitCodes.OK : ExitCodes.UNSUPPORTED;
      }
      return report(path, inspection, settings.runsTraced());
    } catch (io.gospan.offsets.CorruptBinaryException e) {
      return unsupported(path, InspectReport.Status.ERROR, e);
    } catch (GoBinaryException e) {
      return unsupported(path, InspectReport.Status.NOT_GO, e);
    } catch (NotRegularFileException e) {
      return fail(path, ExitCodes.USAGE, esc(e.getMessage())); // replaced since the check above
    } catch (AccessDeniedException e) {
      return fail(path, ExitCodes.ERROR, "permission denied reading " + esc(path));
    } catch (IOException e) {
      return fail(path, ExitCodes.ERROR, "cannot read " + esc(path) + ": " + esc(e.getMessage()));
    }
  }

  /** A file gospan cannot inspect: one line on stderr (and its JSON document); {@code exit}. */
  private int fail(Path path, int exit, String message) {
    err.println("gospan inspect: " + message);
    if (output == Output.JSON) {
      out.println(InspectReport.of(path, InspectReport.Status.ERROR, message).json());
    }
    return exit;
  }

  /** Not a Go binary gospan reads (or a corrupt one): "unsupported", exit 3, as ever. */
  private int unsupported(Path path, InspectReport.Status status, GoBinaryException e) {
    if (output == Output.JSON) {
      out.println(InspectReport.of(path, status, esc(e.getMessage())).json());
    } else {
      out.println("binary:  " + esc(path));
      out.println("verdict: unsupported: " + esc(e.getMessage()));
    }
    return ExitCodes.UNSUPPORTED;
  }

  /** Text that may come from the binary (or its file name), with non-printable characters escaped. */
  private static String esc(Object text) {
    return Printable.escape(text);
  }

  /** The settings of {@code --config}, else the defaults: the same as {@code gospan run}'s discovery gets. */
  private Settings settings() throws io.gospan.receiver.config.ConfigException {
    io.gospan.receiver.config.GospanConfig c = config != null ? io.gospan.receiver.config.ConfigLoader.load(config)
        : io.gospan.receiver.config.GospanConfig.defaults();
    io.gospan.receiver.config.GospanConfig.DiscoveryConfig discovery = c.discovery();
    return new Settings(c.offsets().preferCatalog() ? Preference.CATALOG : Preference.DWARF,
        !c.headers().allow().isEmpty(), io.gospan.receiver.discovery.Tracer.runsTraced(discovery.holdNewBinaries(),
            discovery.holdLimit(), !discovery.linger().isZero() && discovery.maxLingeringBinaries() > 0));
  }

  private int report(Path path, BinaryInspection inspection, String runsTraced) {
    out.println("binary:   " + esc(path));
    out.println("go:       " + esc(inspection.goVersion()) + " (" + (inspection.registerAbi() ? "register ABI" : "stack ABI") + ")");
    if (inspection.moduleInfo()) {
      out.println("grpc-go:  " + esc(inspection.grpcVersion().orElse("not linked")));
      out.println("x/net:    " + esc(inspection.xnetVersion().orElse("not linked")));
    } else {
      out.println("modules:  none recorded (GOPATH build): versions unknown");
      if (inspection.grpcInferredFrom().isPresent()) {
        out.println("grpc-go:  " + esc(inspection.grpcVersion().orElse("?")) + " (inferred from "
            + esc(inspection.grpcInferredFrom().get()) + ")");
        out.println("x/net:    unknown: its fields are inferred only where every catalogued x/net release agrees");
      } else if (inspection.grpcNotInferred().isPresent()) {
        out.println("grpc-go:  unknown: " + esc(inspection.grpcNotInferred().get()));
      }
    }
    Optional<OffsetsResolution> resolution = inspection.resolution();
    if (resolution.isPresent()) {
      OffsetsResolution r = resolution.get();
      out.println("probe set: " + inspection.probeSet().name().toLowerCase(Locale.ROOT)
          + (inspection.probeSetReason() == null ? "" : " (" + esc(inspection.probeSetReason()) + ")"));
      out.println("probes:");
      Reasons refusals = new Reasons("probes");
      inspection.plans().values().stream().filter(plan -> plan.action() != BinaryInspection.Action.UNUSED)
          .forEach(plan -> refusals.count(Reasons.tail(plan.reason())));
      for (BinaryInspection.ProbePlan plan : inspection.plans().values()) {
        Probe p = plan.probe();
        GoFunction f = plan.function();
        String where = f == null ? "not in binary" : String.format("0x%x (file offset 0x%x, from %s)", f.entry(), f.fileOffset(), f.source().name().toLowerCase(Locale.ROOT));
        String fate = InspectReport.place(inspection, plan,
            reason -> refusals.say("refused: " + Reasons.head(reason), Reasons.tail(reason), ""));
        out.printf("  %-30s %s%n      %s: %s%n", p.name().toLowerCase(Locale.ROOT), f != null ? f.name() : p.function(), where, fate);
      }
      out.println("offsets:");
      Reasons missing = new Reasons("fields");
      for (ProbeField field : ProbeField.values()) {
        if (!r.values().containsKey(field)) {
          missing.count(r.missing().getOrDefault(field, "unknown"));
        }
      }
      for (ProbeField field : ProbeField.values()) {
        FieldValue v = r.values().get(field);
        String value;
        if (v == null) {
          value = missing.say("missing", r.missing().getOrDefault(field, "unknown"), field.optional() ? " (optional)" : "");
        } else {
          String note = r.notes().get(field);
          value = InspectReport.show(field, v) + " (" + v.source().name().toLowerCase(Locale.ROOT) + (note == null ? "" : ", " + esc(note)) + ")";
        }
        out.printf("  %-34s %s%n", field.cName(), value);
      }
    }
    if (resolution.isPresent()) {
      printConnections(inspection);
    }
    out.println("verdict:  " + InspectReport.verdictText(inspection));
    if (inspection.unsupported().isPresent()) {
      return ExitCodes.UNSUPPORTED;
    }
    out.println("servehttp: " + InspectReport.serveHttpText(inspection.serveHttp(Probe.HttpServer.XNET)) + "; "
        + InspectReport.serveHttpText(inspection.serveHttp(Probe.HttpServer.NETHTTP)));
    out.println("calls linked inside the process: " + esc(inspection.inProcessLinking()));
    out.println("runs traced: " + runsTraced);
    return ExitCodes.OK;
  }

  /**
   * The connection types: how a {@code net.Conn} of each concrete type the binary stores in one leads to its
   * socket (runtime type information), the types that do not, and PIE.
   */
  private void printConnections(BinaryInspection inspection) {
    ConnTypes c = inspection.layout().connTypes();
    if (c.unavailable() != null) {
      out.println("connections: unknown: " + esc(c.unavailable()));
      return;
    }
    out.println("connections: (runtime type information" + (inspection.layout().pie()
        ? String.format("; PIE: addresses less the load bias, code linked at 0x%x", inspection.layout().textStart()) : "")
        + "; netFD.pfd.Sysfd at " + (c.netFdSysfd() < 0 ? "unknown" : Long.toString(c.netFdSysfd())) + ")");
    for (ConnTypes.Entry e : c.entries()) {
      String how = switch (e.kind()) {
        case SOCKET -> "socket: *net.netFD at +" + e.offset() + " (" + e.via() + ")";
        case INTERFACE -> "wraps the connection at +" + e.offset() + " (" + e.via() + ")";
        case POINTER -> "points at +" + e.offset() + " (" + e.via() + ") to " + c.entries().get(e.next()).type();
      };
      out.printf("  %-44s %s%s%n", esc(e.type()), esc(how), e.iface().isEmpty() || e.iface().equals("net.Conn") ? ""
          : " (as " + esc(e.iface()) + ")");
    }
    c.unresolved().forEach((type, why) -> out.printf("  %-44s no socket: %s%n", esc(type), esc(why)));
    c.dropped().forEach(type -> out.printf("  %-44s no socket: the table of %d types is full%n", esc(type), c.entries().size()));
  }

  /**
   * A reason said once: the first line with it prints it in full with how many lines share it and
   * a tag ({@code missing [2, 14 fields]: ...}); the later ones only the tag ({@code missing [2]}).
   */
  private static final class Reasons {
    private final String what;
    private final Map<String, Integer> counts = new HashMap<>();
    private final Map<String, Integer> tags = new HashMap<>();

    Reasons(String what) {
      this.what = what;
    }

    private static final String UNRESOLVED = " unresolved";

    /** "f unresolved: why" -> "f unresolved"; else "". */
    static String head(String reason) {
      int i = reason.indexOf(UNRESOLVED + ": ");
      return i < 0 ? "" : reason.substring(0, i + UNRESOLVED.length());
    }

    /** "f unresolved: why" -> "why": the part probes share. */
    static String tail(String reason) {
      if (reason == null) {
        return null;
      }
      int i = reason.indexOf(UNRESOLVED + ": ");
      return i < 0 ? reason : reason.substring(i + UNRESOLVED.length() + 2);
    }

    void count(String reason) {
      if (reason != null) {
        counts.merge(reason, 1, Integer::sum);
      }
    }

    String say(String verb, String reason, String suffix) {
      int n = counts.getOrDefault(reason, 1);
      verb = verb.endsWith(": ") ? verb.substring(0, verb.length() - 2) : verb;
      if (n < 2) {
        return verb + ": " + esc(reason) + suffix;
      }
      Integer tag = tags.get(reason);
      if (tag != null) {
        return verb + " [" + tag + "]" + suffix;
      }
      tag = tags.size() + 1;
      tags.put(reason, tag);
      return verb + " [" + tag + ", " + n + " " + what + "]: " + esc(reason) + suffix;
    }
  }

}
