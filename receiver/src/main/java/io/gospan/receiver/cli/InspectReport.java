package io.gospan.receiver.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.resolve.ArgLocation;
import io.gospan.offsets.resolve.ConnTypes;
import io.gospan.offsets.resolve.FieldValue;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import io.gospan.receiver.discovery.BinaryInspection;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@code gospan inspect --output json} writes for one file: a record tree serialised by Jackson (snake_case
 * member names, absent members left out), schema in docs/inspect.md ({@link #SCHEMA_VERSION}). Built from the
 * same {@link BinaryInspection} {@code gospan run} decides with; the texts it carries ({@code verdict.text},
 * {@code probes[].place}, ...) are the ones the text output prints, made by the same methods here.
 *
 * @param schemaVersion {@link #SCHEMA_VERSION}
 * @param binary the path inspected (non-printable characters escaped, as everywhere)
 * @param status {@link Status}, lower case
 * @param error for {@code error} and {@code not_go}: the one-line reason
 * @param go the Go toolchain; null unless the file is a Go binary
 * @param modules versions from the build info (or inferred); null unless the file is a Go binary
 * @param probeSet the probe set and why; null when the binary does not link grpc-go
 * @param probes each probe's function, place and action, in {@link Probe} order; null as probeSet
 * @param offsets each field the probes read, its value and source or why it is missing; null as probeSet
 * @param connections how each connection type leads to its socket; null as probeSet
 * @param verdict what {@code gospan run} will do; null unless the file is a Go binary
 */
public record InspectReport(
    int schemaVersion, String binary, String status, String error, Go go, Modules modules, ProbeSetReport probeSet,
    List<ProbeReport> probes, List<OffsetReport> offsets, Connections connections, Verdict verdict) {

  /** Raised when a member is added (compatible) or changed (incompatible); docs/inspect.md lists the changes. */
  public static final int SCHEMA_VERSION = 1;

  /** A file's status; the gate ({@code inspect DIR}) fails on {@link #UNSUPPORTED} and {@link #ERROR}. */
  public enum Status {
    /** A Go binary linking grpc-go's transport for which {@code gospan run} produces spans. */
    TRACEABLE,
    /** A Go binary linking grpc-go's transport for which {@code gospan run} produces no span. */
    UNSUPPORTED,
    /** A Go binary that does not link grpc-go's transport ({@link BinaryInspection#linksGrpc()}). */
    NOT_GRPC,
    /** Not a Go executable gospan reads: not ELF, not x86-64, or no Go build info or pclntab. */
    NOT_GO,
    /** The file cannot be read, or is a corrupt ELF file. */
    ERROR;

    String json() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** @param version e.g. {@code go1.26.8}; @param abi {@code register} (Go >= 1.17) or {@code stack} */
  public record Go(String version, String abi) {}

  /**
   * @param recorded whether the build info lists modules (false: a GOPATH build)
   * @param grpc grpc-go's version ({@code (main module)}; without module information the inferred version or range),
   *     null when unknown or not linked
   * @param grpcInferredFrom without module information: what grpc-go's version was inferred from
   * @param grpcNotInferred without module information: why it could not be inferred
   * @param xnet golang.org/x/net's version, null when unknown or not linked
   */
  public record Modules(boolean recorded, String grpc, String grpcInferredFrom, String grpcNotInferred, String xnet) {}

  /** @param name {@code streams} or {@code headers}; @param reason why headers, null for streams */
  public record ProbeSetReport(String name, String reason) {}

  /**
   * One probe.
   *
   * @param name the probe ({@code http2_client_new_stream})
   * @param function the Go function it probes
   * @param address the function's entry (link-time address), null when not in the binary
   * @param fileOffset the entry's file offset, null when not in the binary
   * @param symbolSource where the function was found ({@code symtab}, {@code pclntab}), null when not in the binary
   * @param action {@code attach}, {@code defer} (attached once its path is used), {@code refuse}, {@code absent}
   *     (a ServeHTTP copy the binary does not link), {@code unused} (not in the binary's probe set)
   * @param reason why not attached, null when attached or deferred
   * @param place what the text output says after the function's address ("will attach past its guard, file offset
   *     0x...", "refused: ..."), with every reason in full
   * @param attachAt the file offsets its uprobes go to when not its entry (at-returns, past-guard probes); else empty
   * @param resultSlot NewStream on emulated jumps: the stack slot its result is read from ({@code [rsp + slot]}), bytes;
   *     else null
   */
  public record ProbeReport(String name, String function, Long address, Long fileOffset, String symbolSource,
      String action, String reason, String place, List<Long> attachAt, Integer resultSlot) {}

  /**
   * One field a probe reads.
   *
   * @param field its name in bpf/grpc_events.h ({@code http2_client_conn})
   * @param kind {@code argument}, {@code member}, {@code size}, {@code pointer}
   * @param text what the text output prints: a register ({@code RAX}), {@code stack SP+8}, a number, an address in hex
   * @param value member offsets and sizes in bytes, 1/0 for pointer; null for arguments and missing
   * @param register an argument's register ({@code RAX}); null otherwise
   * @param stackOffset an argument on the stack: bytes above SP at entry; null otherwise
   * @param source {@code catalog}, {@code dwarf}, {@code dwarf_abi0}, {@code typeinfo},
   *     {@code code}; null when missing
   * @param note how an inferred value was checked; null when none
   * @param missing why it is missing; null when resolved
   * @param optional whether a probe works without it
   */
  public record OffsetReport(String field, String kind, String text, Long value, String register, Integer stackOffset,
      String source, String note, String missing, boolean optional) {}

  /**
   * The connection types a binary stores in a {@code net.Conn}, from its runtime type information.
   *
   * @param unavailable why the runtime type information could not be read; null when it was
   * @param pie whether the binary is position-independent
   * @param textStart for PIE: the address its code is linked at; else null
   * @param netfdSysfd the offset of {@code netFD.pfd.Sysfd}, bytes; null when unknown
   * @param types the types leading to a socket, directly or through wrappers
   * @param unresolved the types that do not, with why
   * @param dropped types left out because the table was full
   */
  public record Connections(String unavailable, boolean pie, Long textStart, Long netfdSysfd, List<ConnType> types,
      List<Unresolved> unresolved, List<String> dropped) {}

  /**
   * @param type e.g. {@code *crypto/tls.Conn}
   * @param kind {@code socket} (holds the {@code *net.netFD}), {@code interface} (wraps a {@code net.Conn}), {@code pointer}
   * @param offset bytes into the struct
   * @param via the field path ({@code conn.fd})
   * @param iface the interface it is stored as ({@code net.Conn}); empty for a type reached through a pointer
   * @param pointsTo for {@code pointer}: the type it points to; else null
   */
  public record ConnType(String type, String kind, long offset, String via, String iface, String pointsTo) {}

  public record Unresolved(String type, String reason) {}

  /**
   * The verdict.
   *
   * @param producesSpans whether {@code gospan run} produces spans for the binary (exit 0 of {@code inspect PATH})
   * @param clientSpans a span per call the binary makes
   * @param serverSpans a span per call grpc-go's own HTTP/2 server serves
   * @param serveHttp per HTTP/2 server copy ({@code xnet}, {@code nethttp}): gRPC served through its ServeHTTP
   * @param socketLinking whether client and server spans are linked by the connection's socket
   * @param inProcessLinking the text's "calls linked inside the process" line
   * @param runsTraced the text's "runs traced" line
   * @param text the text's "verdict:" line: the spans and the socket linking, or "unsupported: ..." and why
   */
  public record Verdict(boolean producesSpans, boolean clientSpans, boolean serverSpans, List<ServeHttp> serveHttp,
      boolean socketLinking, String inProcessLinking, String runsTraced, String text) {}

  /** @param server {@code xnet} or {@code nethttp}; @param refused the first refused probe of that path, else null */
  public record ServeHttp(String server, boolean linked, boolean spans, String refused, String text) {}

  private static final ObjectWriter WRITER = new ObjectMapper()
      .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
      .setDefaultPropertyInclusion(JsonInclude.Include.NON_NULL)
      .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)
      .writer();

  /** This report as one line of JSON (no line breaks: JSON strings escape them). */
  public String json() {
    try {
      return WRITER.writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise the inspect report of " + binary, e); // records of strings
    }
  }

  /** A file that is not a Go binary gospan reads ({@link Status#NOT_GO}) or cannot be read ({@link Status#ERROR}). */
  static InspectReport of(Path path, Status status, String reason) {
    return new InspectReport(SCHEMA_VERSION, esc(path), status.json(), reason, null, null, null, null, null, null, null);
  }

  /** An inspected Go binary's status: traceable, unsupported, or not a Go gRPC binary. */
  static Status status(BinaryInspection inspection) {
    return inspection.producesSpans() ? Status.TRACEABLE : inspection.linksGrpc() ? Status.UNSUPPORTED : Status.NOT_GRPC;
  }

  /** The report of an inspected Go binary; {@code runsTraced}: {@link io.gospan.receiver.discovery.Tracer#runsTraced}. */
  static InspectReport of(BinaryInspection inspection, String runsTraced) {
    Status status = status(inspection);
    Go go = new Go(inspection.goVersion(), inspection.registerAbi() ? "register" : "stack");
    Modules modules = new Modules(inspection.moduleInfo(), inspection.grpcVersion().orElse(null),
        inspection.grpcInferredFrom().orElse(null), inspection.grpcNotInferred().orElse(null),
        inspection.xnetVersion().orElse(null));
    ProbeSetReport set = null;
    List<ProbeReport> probes = null;
    List<OffsetReport> offsets = null;
    Connections connections = null;
    if (inspection.resolution().isPresent()) {
      OffsetsResolution r = inspection.resolution().get();
      set = new ProbeSetReport(lower(inspection.probeSet()), inspection.probeSetReason());
      probes = new ArrayList<>();
      for (BinaryInspection.ProbePlan plan : inspection.plans().values()) {
        GoFunction f = plan.function();
        Integer slot = plan.probe() == Probe.HTTP2_CLIENT_NEW_STREAM && plan.action() != BinaryInspection.Action.REFUSE
            ? inspection.newStreamReturns().filter(x -> x.slot() >= 0).map(BinaryInspection.Returns::slot).orElse(null) : null;
        probes.add(new ProbeReport(lower(plan.probe()), f != null ? f.name() : plan.probe().function(),
            f != null ? f.entry() : null, f != null ? f.fileOffset() : null, f != null ? lower(f.source()) : null,
            lower(plan.action()), plan.reason(), place(inspection, plan, null), plan.returns(), slot));
      }
      offsets = new ArrayList<>();
      for (ProbeField field : ProbeField.values()) {
        FieldValue v = r.values().get(field);
        if (v == null) {
          offsets.add(new OffsetReport(field.cName(), lower(field.kind()), null, null, null, null, null, null,
              r.missing().getOrDefault(field, "unknown"), field.optional()));
          continue;
        }
        ArgLocation l = field.kind() == ProbeField.Kind.ARGUMENT ? v.location() : null;
        offsets.add(new OffsetReport(field.cName(), lower(field.kind()), show(field, v), l == null ? v.value() : null,
            l != null && l.register() ? register(l) : null, l != null && !l.register() ? l.spOffset() : null,
            lower(v.source()), r.notes().get(field), null, field.optional()));
      }
      connections = connections(inspection);
    }
    List<ServeHttp> serveHttp = new ArrayList<>();
    for (Probe.HttpServer s : Probe.HttpServer.values()) {
      BinaryInspection.ServeHttpPath p = inspection.serveHttp(s);
      serveHttp.add(new ServeHttp(lower(s), p.linked(), p.spans(), p.refused() == null ? null : lower(p.refused()),
          serveHttpText(p)));
    }
    Verdict verdict = new Verdict(inspection.producesSpans(), inspection.clientSpans(), inspection.serverSpans(),
        serveHttp, inspection.socketLinking(), inspection.resolution().isPresent() ? inspection.inProcessLinking() : null,
        runsTraced, verdictText(inspection));
    return new InspectReport(SCHEMA_VERSION, esc(inspection.path()), status.json(), null, go, modules, set, probes,
        offsets, connections, verdict);
  }

  private static Connections connections(BinaryInspection inspection) {
    ConnTypes c = inspection.layout().connTypes();
    boolean pie = inspection.layout().pie();
    Long textStart = pie ? inspection.layout().textStart() : null;
    if (c.unavailable() != null) {
      return new Connections(c.unavailable(), pie, textStart, null, List.of(), List.of(), List.of());
    }
    List<ConnType> types = new ArrayList<>();
    for (ConnTypes.Entry e : c.entries()) {
      types.add(new ConnType(esc(e.type()), lower(e.kind()), e.offset(), esc(e.via()), esc(e.iface()),
          e.next() >= 0 && e.next() < c.entries().size() ? esc(c.entries().get(e.next()).type()) : null));
    }
    List<Unresolved> unresolved = new ArrayList<>();
    c.unresolved().forEach((type, why) -> unresolved.add(new Unresolved(esc(type), esc(why))));
    return new Connections(null, pie, textStart, c.netFdSysfd() < 0 ? null : c.netFdSysfd(), types, unresolved,
        c.dropped().stream().map(InspectReport::esc).toList());
  }

  // ---- the texts both outputs print

  private static final String[] REGISTERS = {
    "RAX", "RDX", "RCX", "RBX", "RSI", "RDI", "RBP", "RSP", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"
  };

  private static String register(ArgLocation l) {
    return l.dwarfRegister() >= 0 && l.dwarfRegister() < REGISTERS.length ? REGISTERS[l.dwarfRegister()]
        : "DWARF register " + l.dwarfRegister();
  }

  /** A resolved field as the text prints it: a register, {@code stack SP+n}, a number. */
  static String show(ProbeField field, FieldValue v) {
    if (field.kind() == ProbeField.Kind.ARGUMENT) {
      ArgLocation l = v.location();
      return l.register() ? register(l) : "stack SP+" + l.spOffset();
    }
    return Long.toString(v.value());
  }

  /**
   * What a probe's line says after its address: "not attached: ...", "will attach ..." and where, or "refused:
   * ..."; {@code refused} words a refusal (the text output tags reasons several probes share), null: in full.
   */
  static String place(BinaryInspection inspection, BinaryInspection.ProbePlan plan,
      java.util.function.Function<String, String> refused) {
    Probe p = plan.probe();
    if (plan.action() == BinaryInspection.Action.UNUSED) {
      return "not attached: " + esc(plan.reason());
    }
    if (plan.reason() == null) {
      return "will attach" + (p.atReturns() ? atReturns(inspection, plan)
          : p.pastGuard() ? String.format(" past its guard, file offset 0x%x", plan.returns().get(0)) : "");
    }
    return refused != null ? refused.apply(plan.reason()) : "refused: " + esc(plan.reason());
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

  /** The "verdict:" line's text: "client spans, server spans, client->server linking ..." or "unsupported: ...". */
  static String verdictText(BinaryInspection inspection) {
    if (inspection.unsupported().isPresent()) {
      return esc(inspection.unsupported().get());
    }
    boolean serveHttpOnly = inspection.serveHttp(Probe.HttpServer.XNET).spans()
        || inspection.serveHttp(Probe.HttpServer.NETHTTP).spans();
    return (inspection.clientSpans() ? "client spans" : "no client spans") + ", "
        + (inspection.serverSpans() ? "server spans" : serveHttpOnly ? "server spans through ServeHTTP only" : "no server spans")
        + ", " + esc(inspection.socketLinkingVerdict());
  }

  /** Whether gRPC served through this HTTP/2 server copy's ServeHTTP gets server spans. */
  static String serveHttpText(BinaryInspection.ServeHttpPath path) {
    String name = path.server() == Probe.HttpServer.XNET ? "x/net http2 (h2c)" : "net/http's http2";
    if (!path.linked()) {
      return name + " not linked";
    }
    if (path.refused() != null) {
      return name + " without server spans (" + lower(path.refused()) + " refused)";
    }
    return name + " server spans (hpack WriteField attached once gRPC is served)";
  }

  /** Text that may come from the binary (or its file name), with non-printable characters escaped. */
  static String esc(Object text) {
    return text == null ? null : Printable.escape(text);
  }

  private static String lower(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT);
  }
}
