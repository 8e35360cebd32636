package io.gospan.receiver.cli;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.buildinfo.Module;
import io.gospan.offsets.resolve.ArgLocation;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
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
      "(catalog, dwarf) or why it is missing. Exit 0 when spans will be produced, 3 when none, 1 on a read error."
    })
public final class InspectCommand implements Callable<Integer> {

  private static final String[] REGISTERS = {
    "RAX", "RDX", "RCX", "RBX", "RSI", "RDI", "RBP", "RSP", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"
  };

  @Parameters(paramLabel = "PATH|PID", description = "an executable, or the pid of a running process")
  String target;

  PrintStream out = System.out;

  @Override
  public Integer call() {
    Path path = target.chars().allMatch(Character::isDigit) ? Path.of("/proc", target, "exe") : Path.of(target);
    if (!Files.exists(path)) {
      System.err.println("gospan inspect: " + path + " does not exist" + (path.startsWith("/proc") ? " (no such process?)" : ""));
      return ExitCodes.ERROR;
    }
    try (GoBinary binary = GoBinary.open(path)) {
      return report(path, binary);
    } catch (GoBinaryException e) {
      out.println("binary:  " + path);
      out.println("verdict: unsupported: " + e.getMessage());
      return ExitCodes.UNSUPPORTED;
    } catch (IOException e) {
      System.err.println("gospan inspect: cannot read " + path + ": " + e.getMessage());
      return ExitCodes.ERROR;
    }
  }

  private int report(Path path, GoBinary binary) throws GoBinaryException {
    BuildInfo info = binary.buildInfo();
    out.println("binary:   " + path);
    out.println("go:       " + info.goVersion() + " (" + (binary.usesRegisterAbi() ? "register ABI" : "stack ABI") + ")");
    String grpc = "unknown (no module information)";
    if (info.hasModuleInfo()) {
      grpc = info.dependency("google.golang.org/grpc").map(InspectCommand::version).orElse("not linked");
      out.println("grpc-go:  " + grpc);
      out.println("x/net:    " + info.dependency("golang.org/x/net").map(InspectCommand::version).orElse("not linked"));
    } else {
      out.println("modules:  none recorded (GOPATH build): versions unknown");
    }
    OffsetsResolution r = OffsetsResolver.resolve(binary);
    out.println("probes:");
    for (Probe p : Probe.values()) {
      GoFunction f = r.functions().get(p);
      String where = f == null ? "not in binary" : String.format("0x%x (file offset 0x%x, from %s)", f.entry(), f.fileOffset(), f.source().name().toLowerCase());
      String refusal = r.refusal(p);
      out.printf("  %-30s %s%n      %s: %s%n", p.name().toLowerCase(), p.function(), where, refusal == null ? "will attach" : "refused: " + refusal);
    }
    out.println("offsets:");
    for (ProbeField field : ProbeField.values()) {
      FieldValue v = r.values().get(field);
      String value;
      if (v == null) {
        value = "missing: " + r.missing().getOrDefault(field, "unknown") + (field.optional() ? " (optional)" : "");
      } else {
        value = show(field, v) + " (" + v.source().name().toLowerCase() + ")";
      }
      out.printf("  %-34s %s%n", field.cName(), value);
    }
    Set<Probe> ok = r.attachable();
    boolean client = ok.contains(Probe.LOOPY_WRITER_WRITE_HEADER) && ok.contains(Probe.HTTP2_CLIENT_OPERATE_HEADERS);
    boolean server = ok.contains(Probe.LOOPY_WRITER_WRITE_HEADER) && ok.contains(Probe.HTTP2_SERVER_OPERATE_HEADERS);
    if (!client && !server) {
      out.println("verdict:  unsupported: gospan will produce no span for this binary (grpc-go " + grpc + ")"
          + (r.values().isEmpty() ? "; stripped and not in the offsets catalog" : ""));
      return ExitCodes.UNSUPPORTED;
    }
    out.println("verdict:  " + (client ? "client spans" : "no client spans") + ", " + (server ? "server spans" : "no server spans")
        + ", " + (r.socketIdentity() ? "client->server linking by socket" : "no socket 4-tuples (spans are linked only by traceparent)"));
    out.println("servehttp: " + serveHttp(r, Probe.HttpServer.XNET) + "; " + serveHttp(r, Probe.HttpServer.NETHTTP));
    return ExitCodes.OK;
  }

  /** Whether gRPC served through this HTTP/2 server copy's ServeHTTP gets server spans. */
  private static String serveHttp(OffsetsResolution r, Probe.HttpServer server) {
    String name = server == Probe.HttpServer.XNET ? "x/net http2 (h2c)" : "net/http's http2";
    Probe processHeaders = server == Probe.HttpServer.XNET ? Probe.XNET_PROCESS_HEADERS : Probe.NETHTTP_PROCESS_HEADERS;
    if (!r.functions().containsKey(processHeaders)) {
      return name + " not linked";
    }
    for (Probe p : Probe.values()) {
      if (p.server() == server && r.refusal(p) != null) {
        return name + " without server spans (" + p.name().toLowerCase() + " refused)";
      }
    }
    return name + " server spans (hpack WriteField attached once gRPC is served)";
  }


  private static String version(Module m) {
    return m.effectiveVersion();
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
