package io.gospan.receiver.cli;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.elf.NotRegularFileException;
import io.gospan.offsets.resolve.ArgLocation;
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
 * {@code gospan inspect <path|pid>}: what gospan would do with a binary, without loading BPF.
 * A pre-deployment check.
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
      "2 when the path is not a regular file (a FIFO, socket, device or directory is refused without being opened).",
      "Text read from the binary is printed with non-printable characters escaped (\\x1b, \\u202e)."
    })
public final class InspectCommand implements Callable<Integer> {

  private static final String[] REGISTERS = {
    "RAX", "RDX", "RCX", "RBX", "RSI", "RDI", "RBP", "RSP", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"
  };

  @Parameters(paramLabel = "PATH|PID", description = "an executable, or the pid of a running process")
  String target;

  @picocli.CommandLine.Option(names = {"-c", "--config"}, paramLabel = "FILE",
      description = "the gospan.yaml `gospan run` uses (offsets.prefer, headers.allow, discovery.linger, discovery.hold_new_binaries)")
  Path config;

  PrintStream out = System.out;
  PrintStream err = System.err;

  @Override
  public Integer call() {
    Path path = target.chars().allMatch(Character::isDigit) ? Path.of("/proc", target, "exe") : Path.of(target);
    try {
      // before anything opens it: a FIFO would block the open, a device could stream forever
      ElfFile.requireRegularFile(path);
    } catch (NotRegularFileException e) {
      err.println("gospan inspect: " + esc(e.getMessage()));
      return ExitCodes.USAGE;
    } catch (NoSuchFileException e) {
      err.println("gospan inspect: " + esc(path) + " does not exist" + (path.startsWith("/proc") ? " (no such process?)" : ""));
      return ExitCodes.ERROR;
    } catch (AccessDeniedException e) {
      err.println("gospan inspect: permission denied reading " + esc(path));
      return ExitCodes.ERROR;
    } catch (IOException e) {
      err.println("gospan inspect: cannot read " + esc(path) + ": " + esc(e.getMessage()));
      return ExitCodes.ERROR;
    }
    try (GoBinary binary = GoBinary.open(path)) {
      return report(path, binary);
    } catch (GoBinaryException e) {
      out.println("binary:  " + esc(path));
      out.println("verdict: unsupported: " + esc(e.getMessage()));
      return ExitCodes.UNSUPPORTED;
    } catch (NotRegularFileException e) {
      err.println("gospan inspect: " + esc(e.getMessage())); // replaced since the check above
      return ExitCodes.USAGE;
    } catch (AccessDeniedException e) {
      err.println("gospan inspect: permission denied reading " + esc(path));
      return ExitCodes.ERROR;
    } catch (IOException e) {
      err.println("gospan inspect: cannot read " + esc(path) + ": " + esc(e.getMessage()));
      return ExitCodes.ERROR;
    }
  }

  /** Where an at-returns probe attaches: emulated jumps before its RETs (the result's stack slot), or the RETs. */
  private static String atReturns(BinaryInspection inspection, BinaryInspection.ProbePlan plan) {
    BinaryInspection.Returns r = plan.probe() == Probe.HTTP2_CLIENT_NEW_STREAM
        ? inspection.newStreamReturns().orElse(null) : null;
    if (r != null && r.slot() >= 0) {
      return String.format(" at %d emulated jump%s before its returns, the result read from [rsp + 0x%x]",
          plan.returns().size(), plan.returns().size() == 1 ? "" : "s", r.slot());
    }
    return " at its " + plan.returns().size() + " RET instructions (single-stepped"
        + (r != null && r.whyRets() != null ? ": " + esc(r.whyRets()) : "") + ")";
  }

  /** Text that may come from the binary (or its file name), with non-printable characters escaped. */
  private static String esc(Object text) {
    return Printable.escape(text);
  }

  private int report(Path path, GoBinary binary) throws GoBinaryException {
    // the same inspection, with the same settings, as `gospan run`'s discovery
    Preference preference = Preference.DWARF;
    boolean responseHeaders = false;
    io.gospan.receiver.config.GospanConfig.DiscoveryConfig discovery = io.gospan.receiver.config.GospanConfig.defaults().discovery();
    if (config != null) {
      try {
        io.gospan.receiver.config.GospanConfig c = io.gospan.receiver.config.ConfigLoader.load(config);
        preference = c.offsets().preferCatalog() ? Preference.CATALOG : Preference.DWARF;
        responseHeaders = !c.headers().allow().isEmpty();
        discovery = c.discovery();
      } catch (io.gospan.receiver.config.ConfigException e) {
        err.println("gospan inspect: " + esc(e.getMessage()));
        return ExitCodes.USAGE;
      }
    }
    BinaryInspection inspection = BinaryInspection.inspect(path, binary, preference, responseHeaders);
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
        String fate;
        if (plan.action() == BinaryInspection.Action.UNUSED) {
          fate = "not attached: " + esc(plan.reason());
        } else if (plan.reason() == null) {
          fate = "will attach" + (p.atReturns() ? atReturns(inspection, plan)
              : p.pastGuard() ? String.format(" past its guard, file offset 0x%x", plan.returns().get(0)) : "");
        } else {
          fate = refusals.say("refused: " + Reasons.head(plan.reason()), Reasons.tail(plan.reason()), "");
        }
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
          value = show(field, v) + " (" + v.source().name().toLowerCase(Locale.ROOT) + (note == null ? "" : ", " + esc(note)) + ")";
        }
        out.printf("  %-34s %s%n", field.cName(), value);
      }
    }
    if (resolution.isPresent()) {
      printConnections(inspection);
    }
    Optional<String> unsupported = inspection.unsupported();
    if (unsupported.isPresent()) {
      out.println("verdict:  " + esc(unsupported.get()));
      return ExitCodes.UNSUPPORTED;
    }
    boolean client = inspection.clientSpans();
    boolean server = inspection.serverSpans();
    out.println("verdict:  " + (client ? "client spans" : "no client spans") + ", "
        + (server ? "server spans" : serveHttpOnly(inspection) ? "server spans through ServeHTTP only" : "no server spans")
        + ", " + esc(inspection.socketLinkingVerdict()));
    out.println("servehttp: " + serveHttp(inspection.serveHttp(Probe.HttpServer.XNET)) + "; "
        + serveHttp(inspection.serveHttp(Probe.HttpServer.NETHTTP)));
    out.println("calls linked inside the process: " + esc(inspection.inProcessLinking()));
    out.println("runs traced: " + io.gospan.receiver.discovery.Tracer.runsTraced(discovery.holdNewBinaries(),
        discovery.holdLimit(), !discovery.linger().isZero() && discovery.maxLingeringBinaries() > 0));
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

  private static boolean serveHttpOnly(BinaryInspection inspection) {
    return inspection.serveHttp(Probe.HttpServer.XNET).spans() || inspection.serveHttp(Probe.HttpServer.NETHTTP).spans();
  }

  /** Whether gRPC served through this HTTP/2 server copy's ServeHTTP gets server spans. */
  private static String serveHttp(BinaryInspection.ServeHttpPath path) {
    String name = path.server() == Probe.HttpServer.XNET ? "x/net http2 (h2c)" : "net/http's http2";
    if (!path.linked()) {
      return name + " not linked";
    }
    if (path.refused() != null) {
      return name + " without server spans (" + path.refused().name().toLowerCase(Locale.ROOT) + " refused)";
    }
    return name + " server spans (hpack WriteField attached once gRPC is served)";
  }

  private static String show(ProbeField field, FieldValue v) {
    switch (field.kind()) {
      case ARGUMENT: {
        ArgLocation l = v.location();
        return l.register() ? REGISTERS[l.dwarfRegister()] : "stack SP+" + l.spOffset();
      }
      case ITAB:
        return String.format("0x%x", v.value());
      default:
        return Long.toString(v.value());
    }
  }
}
