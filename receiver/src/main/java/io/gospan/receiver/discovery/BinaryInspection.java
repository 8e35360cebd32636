package io.gospan.receiver.discovery;

import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.GoFunction;
import io.gospan.offsets.buildinfo.BuildInfo;
import io.gospan.offsets.buildinfo.Module;
import io.gospan.offsets.buildinfo.Printable;
import io.gospan.offsets.catalog.OffsetsCatalog;
import io.gospan.offsets.resolve.OffsetsResolution;
import io.gospan.offsets.resolve.OffsetsResolver;
import io.gospan.offsets.resolve.Preference;
import io.gospan.offsets.resolve.Probe;
import io.gospan.offsets.resolve.ProbeField;
import io.gospan.offsets.code.FunctionCode;
import io.gospan.offsets.code.ResultPlaces;
import io.gospan.offsets.resolve.ConnKind;
import io.gospan.offsets.resolve.ConnTypes;
import io.gospan.receiver.probe.BinaryLayout;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What gospan does with one Go binary, decided in one place for both {@code gospan run} (the
 * {@link ProbeAttacher} attaches, defers and refuses what this says) and {@code gospan inspect}
 * (prints it), so the two cannot disagree: the versions in its build info, each probe's function
 * and {@link Action}, and the {@link #producesSpans() verdict}.
 *
 * <p>Every text it hands out that comes from the binary (versions, reasons) has its non-printable
 * characters escaped ({@link Printable#escape}): it is printed by {@code inspect}, logged and
 * exported as is.
 *
 * <p>A binary whose build info lists no grpc-go is not resolved (no offsets, no functions): the
 * DWARF of a large Go program that cannot be traced is not read.
 */
public final class BinaryInspection {

  /** What happens to one probe of the binary. */
  public enum Action {
    /** Attached with the binary. */
    ATTACH,
    /**
     * Resolved, attached only once its path is seen in use: hpack {@code WriteField} (a hit per
     * header field of every encoder, grpc-go's own included), once the binary serves gRPC through
     * that HTTP/2 server's {@code ServeHTTP}.
     */
    DEFER,
    /** Not attached: a field it needs is unresolved, or its grpc-go function is missing. */
    REFUSE,
    /** A ServeHTTP-path function of an HTTP/2 server copy the binary does not link: no refusal. */
    ABSENT,
    /** Resolved, but not in the probe set the binary gets ({@link #probeSet()}): not attached. */
    UNUSED
  }

  /**
   * One probe's fate.
   *
   * @param function its function's entry, null when the binary lacks it
   * @param reason why it is not attached ({@link Action#REFUSE}, {@link Action#ABSENT}), else null
   * @param returns for a probe attached at its function's returns ({@link Probe#atReturns()}) and
   *     not refused: the file offsets it is attached at, one uprobe each (NewStream: the emulated jumps
   *     before its RETs, {@link ResultPlaces}, else its {@code RET} instructions, decoded with {@link
   *     FunctionCode}); for a probe attached past its function's guard ({@link
   *     Probe#pastGuard()}): the one file offset there; empty otherwise
   */
  public record ProbePlan(Probe probe, GoFunction function, Action action, String reason, List<Long> returns) {
    public ProbePlan {
      returns = List.copyOf(returns);
    }

    public ProbePlan(Probe probe, GoFunction function, Action action, String reason) {
      this(probe, function, action, reason, List.of());
    }
  }

  /**
   * The gRPC served through one HTTP/2 server copy's {@code ServeHTTP} (grpc-go
   * internal/transport/handler_server.go).
   *
   * @param linked whether the binary links that copy (its processHeaders function is there)
   * @param refused the first of its probes that is refused, null when none is
   */
  public record ServeHttpPath(Probe.HttpServer server, boolean linked, Probe refused) {
    /** Whether gRPC served this way gets server spans. */
    public boolean spans() {
      return linked && refused == null;
    }
  }

  private final Path path;
  private final String goVersion;
  private final boolean registerAbi;
  private final boolean moduleInfo;
  private final Optional<String> grpcVersion;
  private final Optional<String> grpcInferredFrom;
  private final String grpcNotInferred;
  private final Optional<String> xnetVersion;
  private final OffsetsResolution resolution;
  private final BinaryLayout layout;
  private final Map<Probe, ProbePlan> plans;
  private final Probe.ProbeSet probeSet;
  private final String probeSetReason;
  private final Returns newStreamReturns;

  private BinaryInspection(
      Path path, BuildInfo info, boolean registerAbi, OffsetsResolution resolution, BinaryLayout layout,
      Map<Probe, Object> returns, OffsetsCatalog.BinaryVersions versions, boolean responseHeaders) {
    this.path = path;
    this.goVersion = Printable.escape(info.goVersion());
    this.registerAbi = registerAbi;
    this.moduleInfo = info.hasModuleInfo();
    Optional<String> grpc = info.dependency("google.golang.org/grpc").map(Module::effectiveVersion).map(Printable::escape);
    if (grpc.isEmpty() && info.main().map(m -> m.path().equals("google.golang.org/grpc")).orElse(false)) {
      grpc = Optional.of("(main module)");
    }
    if (!moduleInfo && versions != null) {
      this.grpcInferredFrom = Optional.ofNullable(versions.grpcInferredFrom()).map(Printable::escape);
      this.grpcNotInferred = versions.grpc() == null && versions.grpcRange() == null
          ? Printable.escape(versions.whyNoVersion(OffsetsCatalog.GRPC)) : null;
      if (versions.grpc() != null) {
        grpc = Optional.of(Printable.escape(versions.grpc()));
      } else if (versions.grpcRange() != null) {
        grpc = Optional.of(Printable.escape(versions.grpcRange().get(0) + " … " + versions.grpcRange().get(1)));
      }
    } else {
      this.grpcInferredFrom = Optional.empty();
      this.grpcNotInferred = null;
    }
    this.grpcVersion = grpc;
    this.xnetVersion = info.dependency("golang.org/x/net").map(Module::effectiveVersion).map(Printable::escape);
    this.resolution = resolution;
    this.layout = layout;
    this.newStreamReturns = returns.get(Probe.HTTP2_CLIENT_NEW_STREAM) instanceof Returns x ? x : null;
    Map<Probe, ProbePlan> p = new EnumMap<>(Probe.class);
    for (Probe probe : Probe.values()) {
      p.put(probe, plan(probe, resolution, registerAbi, returns.get(probe)));
    }
    // The probe set: the streams set (fewer hits) where it can be attached, else the headers set.
    Probe.ProbeSet set = Probe.ProbeSet.STREAMS;
    String why = null;
    if (!registerAbi) {
      why = "stack ABI (Go <= 1.16)";
    } else if (responseHeaders) {
      why = "response metadata is captured (headers.allow): only the headers set reads response headers and trailers";
    } else if (resolution != null && !resolution.values().containsKey(ProbeField.STREAM_METHOD)) {
      // NewStream's record names the client stream's method: without it the set gives no span name
      why = "stream_method unresolved: " + resolution.missing().getOrDefault(ProbeField.STREAM_METHOD, "unknown");
    } else if (resolution != null) {
      for (Probe probe : Probe.grpcTransport(Probe.ProbeSet.STREAMS)) {
        ProbePlan x = p.get(probe);
        // a side the binary does not have (a client-only program has no http2Server) is no reason
        if (x.action() != Action.ATTACH && x.function() != null) {
          why = probe.name().toLowerCase(Locale.ROOT) + " " + (x.reason() == null ? "not attached" : x.reason());
          break;
        }
      }
    }
    if (why != null) {
      set = Probe.ProbeSet.HEADERS;
    }
    // The in-process probes are useful only together (handleStream records what NewStream's
    // returns look up): one refused, none is attached, and its reason is theirs. Except NewStream
    // in the streams set, where it also starts the client spans (without handleStream it finds no
    // parent: a client-only program).
    ProbePlan refusedInProcess = Probe.inProcessLinking().stream().map(p::get)
        .filter(x -> x.action() != Action.ATTACH).findFirst().orElse(null);
    if (refusedInProcess != null) {
      for (Probe probe : Probe.inProcessLinking()) {
        ProbePlan x = p.get(probe);
        boolean spans = set == Probe.ProbeSet.STREAMS && Probe.grpcTransport(set).contains(probe);
        if (x.action() == Action.ATTACH && !spans) {
          p.put(probe, new ProbePlan(probe, x.function(), Action.REFUSE, "attached only with "
              + refusedInProcess.probe().name().toLowerCase(Locale.ROOT) + ", refused: " + refusedInProcess.reason()));
        }
      }
    }
    for (Probe probe : Probe.values()) {
      ProbePlan x = p.get(probe);
      if (!probe.inSet(set) && x.action() != Action.ABSENT) {
        p.put(probe, new ProbePlan(probe, x.function(), Action.UNUSED, "in the " + other(set).name().toLowerCase(Locale.ROOT)
            + " probe set only" + (x.reason() == null ? "" : " (" + x.reason() + ")")));
      }
    }
    this.probeSet = set;
    this.probeSetReason = why;
    this.plans = Collections.unmodifiableMap(p);
  }

  private static Probe.ProbeSet other(Probe.ProbeSet s) {
    return s == Probe.ProbeSet.STREAMS ? Probe.ProbeSet.HEADERS : Probe.ProbeSet.STREAMS;
  }

  /**
   * The probe set of grpc-go's transport the binary gets: {@link Probe.ProbeSet#STREAMS} (a stream's
   * start and end where grpc-go creates and closes it: 2 hits per unary call on a client, 3 on a
   * server with in-process propagation) whenever it can be attached, else {@link
   * Probe.ProbeSet#HEADERS} (every HEADERS block: 3 and 3, plus the in-process probes), see {@link
   * #probeSetReason()}.
   */
  public Probe.ProbeSet probeSet() {
    return probeSet;
  }

  /** Why the binary gets the headers set (the stack ABI, response metadata wanted, a streams-set probe refused); null for the streams set. */
  public String probeSetReason() {
    return probeSetReason;
  }

  /**
   * @param returns for a probe at its function's returns: where ({@link Returns}); past a guard: the
   *     one file offset ({@code List<Long>}); or why the function's code could not be decoded ({@code String})
   */
  private static ProbePlan plan(Probe probe, OffsetsResolution r, boolean registerAbi, Object returns) {
    if (r == null) {
      return new ProbePlan(probe, null, Action.ABSENT, "the binary does not link grpc-go");
    }
    GoFunction f = r.functions().get(probe);
    String refusal = r.refusal(probe) == null ? null : Printable.escape(r.refusal(probe));
    if (refusal == null && probe.registerAbiOnly() && !registerAbi) {
      refusal = "stack ABI (Go <= 1.16): the probe reads Go's register ABI (g in R14, results in RAX)";
    }
    if (refusal == null && (probe.atReturns() || probe.pastGuard())) {
      if (returns instanceof String why) {
        refusal = why;
      } else if (returns instanceof Returns rs && rs.offsets().isEmpty()) {
        refusal = "no RET instruction in " + probe.function();
      }
    }
    if (refusal != null) {
      return new ProbePlan(probe, f, probe.serveHttp() && f == null ? Action.ABSENT : Action.REFUSE, refusal);
    }
    List<Long> rets = new ArrayList<>();
    if (probe.atReturns() && returns instanceof Returns rs) {
      rets.addAll(rs.offsets());
    } else if (probe.pastGuard() && returns instanceof List<?> l) {
      l.forEach(o -> rets.add((Long) o));
    }
    return new ProbePlan(probe, f, probe.lazy() ? Action.DEFER : Action.ATTACH, null, rets);
  }

  /**
   * Where an at-returns probe goes.
   *
   * @param offsets file offsets, one uprobe each
   * @param slot -1: at the RETs, the result in RAX; else on emulated jumps before them, the result in the
   *     qword at {@code [rsp + slot]} ({@link ResultPlaces})
   * @param whyRets why they are the RETs although the function is analyzed ({@link ResultPlaces#reason()}), else null
   */
  public record Returns(List<Long> offsets, int slot, String whyRets) {
    public Returns {
      offsets = List.copyOf(offsets);
    }
  }

  /**
   * Where each at-returns probe ({@link Probe#atReturns()}) and past-guard probe goes: a {@link Returns}
   * (NewStream: {@link ResultPlaces}; others: the RET instructions, {@link FunctionCode}) or, past a
   * guard, a one-element {@code List<Long>}; a one-line reason instead when the code cannot be decoded.
   */
  private static Map<Probe, Object> returns(GoBinary b, OffsetsResolution r) {
    Map<Probe, Object> out = new EnumMap<>(Probe.class);
    if (r == null) {
      return out;
    }
    for (Probe probe : Probe.values()) {
      GoFunction f = r.functions().get(probe);
      if (probe.pastGuard() && f != null) {
        out.put(probe, pastGuard(b, r, probe, f));
        continue;
      }
      if (!probe.atReturns() || f == null) {
        continue;
      }
      try {
        ResultPlaces places = probe == Probe.HTTP2_CLIENT_NEW_STREAM ? ResultPlaces.of(b, f) : null;
        List<Long> at = places != null ? places.addresses() : FunctionCode.of(b, f).returns();
        List<Long> offsets = new ArrayList<>();
        for (long a : at) {
          offsets.add(f.fileOffset() + (a - f.entry()));
        }
        out.put(probe, new Returns(offsets, places != null ? places.slot() : -1,
            places == null || places.reason() == null ? null : Printable.escape(places.reason())));
      } catch (GoBinaryException | RuntimeException e) {
        out.put(probe, "its code cannot be decoded to find its returns: " + Printable.escape(e.getMessage()));
      }
    }
    return out;
  }

  private static final String[] DWARF_REGISTERS = {
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};

  /**
   * The file offset past a past-guard probe's guard ({@link FunctionCode#pastGuard}), as a one-element
   * list, or why there is none: the probe reads its arguments there, so each must be in a register
   * (the register ABI) that nothing before the guard writes; the guard swaps the argument {@code s}.
   */
  private static Object pastGuard(GoBinary b, OffsetsResolution r, Probe probe, GoFunction f) {
    java.util.Set<String> keep = new java.util.HashSet<>();
    String base = null;
    for (ProbeField field : ProbeField.values()) {
      if (field.kind() != ProbeField.Kind.ARGUMENT || field.probe() != probe) {
        continue;
      }
      io.gospan.offsets.resolve.FieldValue v = r.values().get(field);
      if (v == null) {
        return "argument " + field.path().get(0) + " unresolved"; // refused for it anyway
      }
      if (!v.location().register() || v.location().dwarfRegister() < 0 || v.location().dwarfRegister() > 15) {
        return "argument " + field.path().get(0) + " is not in a general register at entry (" + v + ")";
      }
      String reg = DWARF_REGISTERS[v.location().dwarfRegister()];
      keep.add(reg);
      if (field.path().get(0).equals("s")) {
        base = reg;
      }
    }
    if (base == null) {
      return "no argument s: the guard is not where it is looked for";
    }
    try {
      FunctionCode.Guard g = FunctionCode.pastGuard(b, f, base, keep);
      if (!g.found()) {
        return "its guard was not found: " + Printable.escape(g.reason());
      }
      return List.of(f.fileOffset() + (g.address() - f.entry()));
    } catch (GoBinaryException | RuntimeException e) {
      return "its code cannot be decoded to find its guard: " + Printable.escape(e.getMessage());
    }
  }

  /**
   * Reads a binary: build info, and, when it links grpc-go (or says nothing of its modules), the
   * probed functions and the offsets (the embedded catalog and its DWARF, {@code preference}
   * deciding when both answer).
   *
   * @param exe the executable ({@code /proc/<pid>/exe} reaches it across mount namespaces)
   * @throws io.gospan.offsets.NotGoBinaryException when it is not a Go binary
   * @throws GoBinaryException when it is not a readable Go executable (not ELF, another
   *     architecture, corrupt)
   * @throws IOException when it cannot be read
   */
  public static BinaryInspection inspect(Path exe, Preference preference) throws IOException {
    return inspect(exe, preference, false);
  }

  /**
   * As {@link #inspect(Path, Preference)}; {@code responseHeaders}: response metadata is captured
   * ({@code headers.allow}), which only the headers probe set reads, so every binary gets that set.
   */
  public static BinaryInspection inspect(Path exe, Preference preference, boolean responseHeaders) throws IOException {
    try (GoBinary b = GoBinary.open(exe)) {
      return inspect(exe, b, preference, responseHeaders);
    }
  }

  /** As {@link #inspect(Path, Preference)}, on a binary already open. */
  public static BinaryInspection inspect(Path exe, GoBinary b, Preference preference) throws GoBinaryException {
    return inspect(exe, b, preference, false);
  }

  /** As {@link #inspect(Path, Preference, boolean)}, on a binary already open. */
  public static BinaryInspection inspect(Path exe, GoBinary b, Preference preference, boolean responseHeaders)
      throws GoBinaryException {
    return inspect(exe, b, preference, responseHeaders, OffsetsCatalog.embedded());
  }

  /**
   * As {@link #inspect(Path, GoBinary, Preference, boolean)}, with another offsets catalog than the
   * embedded one (tests: a catalog without some fields, as an older catalog would be).
   */
  public static BinaryInspection inspect(Path exe, GoBinary b, Preference preference, boolean responseHeaders,
      OffsetsCatalog catalog) throws GoBinaryException {
    BuildInfo info = b.buildInfo();
    boolean grpcLinked = !info.hasModuleInfo()
        || info.dependency("google.golang.org/grpc").isPresent()
        || info.main().map(m -> m.path().equals("google.golang.org/grpc")).orElse(false);
    OffsetsResolution r = grpcLinked ? OffsetsResolver.resolve(b, catalog, preference) : null;
    OffsetsCatalog.BinaryVersions versions = null;
    if (!info.hasModuleInfo()) {
      try {
        versions = OffsetsResolver.versions(b, catalog); // grpc-go's version inferred
      } catch (GoBinaryException e) {
        // the resolution above reported the same failure per field
      }
    }
    Map<Probe, Object> returns = returns(b, r);
    BinaryLayout layout = grpcLinked ? layout(b) : BinaryLayout.NONE;
    if (returns.get(Probe.HTTP2_CLIENT_NEW_STREAM) instanceof Returns places && places.slot() >= 0) {
      layout = layout.withNewStreamResultSlot(places.slot());
    }
    return new BinaryInspection(exe, info, b.usesRegisterAbi(), r, layout, returns, versions, responseHeaders);
  }

  /** The binary's layout; a runtime type information that cannot be read only costs the connection types. */
  private static BinaryLayout layout(GoBinary b) {
    try {
      return BinaryLayout.of(b);
    } catch (GoBinaryException | RuntimeException e) {
      boolean pie = b.elf().positionIndependent();
      return new BinaryLayout(b.elf().readOnlyData(), pie, pie ? b.elf().executableStart().orElse(0) : 0,
          ConnTypes.unavailable("the runtime type information cannot be read: " + Printable.escape(e.getMessage())));
    }
  }

  /** The path inspected. */
  public Path path() {
    return path;
  }

  /** The Go toolchain version, e.g. {@code go1.22.12}. */
  public String goVersion() {
    return goVersion;
  }

  /** Whether Go functions take their arguments in registers (Go 1.17+ on amd64). */
  public boolean registerAbi() {
    return registerAbi;
  }

  /** Whether the build info lists modules (false for a GOPATH build: versions unknown). */
  public boolean moduleInfo() {
    return moduleInfo;
  }

  /**
   * grpc-go's module version ({@code "(main module)"} for grpc-go's own programs); empty when
   * not linked or without module information ({@link #moduleInfo()}).
   */
  public Optional<String> grpcVersion() {
    return grpcVersion;
  }

  /** golang.org/x/net's module version; empty when not linked or without module information. */
  public Optional<String> xnetVersion() {
    return xnetVersion;
  }

  /**
   * What grpc-go's version was inferred from when the binary records no modules ({@code "grpc-go user
   * agent grpc-go/1.33.3"}): then {@link #grpcVersion()} is that inferred version. Empty for a module
   * build, or when nothing was inferred ({@link #grpcNotInferred()}).
   */
  public Optional<String> grpcInferredFrom() {
    return grpcInferredFrom;
  }

  /** Without module information: why grpc-go's version could not be inferred; else empty. */
  public Optional<String> grpcNotInferred() {
    return Optional.ofNullable(grpcNotInferred);
  }

  /** grpc-go's version as a traced binary reports it: "unknown" without module information. */
  public String grpcVersionOrUnknown() {
    return grpcVersion.orElse("unknown");
  }

  /** The resolved offsets and functions; empty when the binary does not link grpc-go. */
  public Optional<OffsetsResolution> resolution() {
    return Optional.ofNullable(resolution);
  }

  /**
   * What the binary's slot holds besides its offsets: read-only data, PIE load bias, connection types
   * ({@link BinaryLayout#NONE} when the binary does not link grpc-go).
   */
  public BinaryLayout layout() {
    return layout;
  }

  /**
   * Where the NewStream probes go (emulated jumps reading a stack slot, or the RETs reading RAX, and why);
   * empty when its function is absent or could not be decoded.
   */
  public Optional<Returns> newStreamReturns() {
    return Optional.ofNullable(newStreamReturns);
  }

  /** Every probe's plan, in {@link Probe} order. */
  public Map<Probe, ProbePlan> plans() {
    return plans;
  }

  /** The probes with this action. */
  public Set<Probe> probes(Action action) {
    Set<Probe> out = EnumSet.noneOf(Probe.class);
    plans.values().stream().filter(p -> p.action() == action).forEach(p -> out.add(p.probe()));
    return out;
  }

  /** Probes attached or deferred (every resolved one). */
  public Set<Probe> attachable() {
    Set<Probe> out = probes(Action.ATTACH);
    out.addAll(probes(Action.DEFER));
    return out;
  }

  /** Refused probes with the reason (ServeHTTP copies the binary does not link are no refusal). */
  public Map<Probe, String> refused() {
    Map<Probe, String> out = new LinkedHashMap<>();
    plans.values().stream().filter(p -> p.action() == Action.REFUSE).forEach(p -> out.put(p.probe(), p.reason()));
    return out;
  }

  /** grpc-go's client side: a span per call the binary makes. */
  public boolean clientSpans() {
    return attachable().containsAll(Probe.clientSpans(probeSet));
  }

  /** grpc-go's own HTTP/2 server: a span per call the binary serves. */
  public boolean serverSpans() {
    return attachable().containsAll(Probe.serverSpans(probeSet));
  }

  /**
   * Whether the client calls this binary makes while serving a call are linked to that call
   * (in-process propagation: {@link Probe#inProcessLinking()} all attached): "yes (ctx walk,
   * goroutine, parent goroutine)" (the ways the parent is looked for: goroutine when {@code
   * runtime.g}'s goid is known, parent goroutine on Go >= 1.21, where it has {@code parentGoid}),
   * or "no: " and the reason.
   */
  public String inProcessLinking() {
    for (Probe p : Probe.inProcessLinking()) {
      ProbePlan plan = plans.get(p);
      if (plan.action() != Action.ATTACH) {
        String why = plan.reason() == null ? "not attached" : plan.reason();
        if (why.startsWith("attached only with ")) {
          continue; // the other's reason is the real one
        }
        if (why.contains("no DWARF") && why.contains("does not cover")) {
          return "no: stripped binary (no DWARF), and the offsets catalog does not cover the fields in-process linking"
              + " needs for these versions";
        }
        return "no: " + p.name().toLowerCase(Locale.ROOT) + " " + why;
      }
    }
    // goroutine lookups need runtime.g's goid (g_streams is keyed by it); the parent goroutine's
    // also its parentGoid (Go >= 1.21)
    boolean goid = resolution.values().containsKey(ProbeField.G_GOID);
    boolean parentGoid = goid && resolution.values().containsKey(ProbeField.G_PARENT_GOID);
    return "yes (ctx walk" + (goid ? ", goroutine" : "") + (parentGoid ? ", parent goroutine)" : ")");
  }

  /**
   * Whether a stream's start carries its socket (TCP 4-tuple, or a unix socket's inodes and path), linking
   * a client span to its server span: the transport's {@code net.Conn} members resolved, and some
   * connection type of the binary leading to a socket.
   */
  public boolean socketLinking() {
    return resolution != null && resolution.socketIdentity() && layout.connTypes().identifiesSockets()
        && (resolution.values().containsKey(ProbeField.NET_FD_SYSFD) || layout.connTypes().netFdSysfd() >= 0);
  }

  /**
   * What {@code inspect}'s verdict says of linking by socket: "client->server linking by socket (...)", or
   * "no socket identity: why (spans are linked only by traceparent)".
   */
  public String socketLinkingVerdict() {
    ConnTypes c = layout.connTypes();
    if (socketLinking()) {
      long wrappers = c.entries().stream().filter(e -> e.kind() != ConnKind.SOCKET && e.itab() != 0).count();
      boolean tcp = c.netConn("*net.TCPConn").isPresent();
      boolean unix = c.netConn("*net.UnixConn").isPresent();
      String kinds = tcp && unix ? "TCP and unix domain sockets" : tcp ? "TCP" : unix ? "unix domain sockets" : "sockets";
      return "client->server linking by socket (" + kinds + (layout.pie() ? ", PIE load bias per process" : "")
          + "; " + wrappers + " connection wrapper type" + (wrappers == 1 ? "" : "s") + " unwrapped"
          + (c.unresolved().isEmpty() ? "" : ", " + c.unresolved().size() + " not: their connections carry no socket") + ")";
    }
    String why;
    if (resolution == null || !resolution.socketIdentity()) {
      why = "grpc-go's net.Conn members are unresolved";
    } else if (c.unavailable() != null) {
      why = Printable.escape(c.unavailable());
    } else if (!c.identifiesSockets()) {
      why = "no connection type of the binary leads to a *net.netFD";
    } else {
      why = "net.netFD's pfd.Sysfd is neither resolved nor in the runtime type information";
    }
    return "no socket identity: " + why + " (spans are linked only by traceparent)";
  }

  /** gRPC served through one HTTP/2 server copy's {@code ServeHTTP}. */
  public ServeHttpPath serveHttp(Probe.HttpServer server) {
    Probe processHeaders = server == Probe.HttpServer.XNET ? Probe.XNET_PROCESS_HEADERS : Probe.NETHTTP_PROCESS_HEADERS;
    if (resolution == null || !resolution.functions().containsKey(processHeaders)) {
      return new ServeHttpPath(server, false, null);
    }
    for (Probe p : Probe.values()) {
      if (p.server() == server && plans.get(p).action() == Action.REFUSE) {
        return new ServeHttpPath(server, true, p);
      }
    }
    return new ServeHttpPath(server, true, null);
  }

  /**
   * Whether the binary links grpc-go's HTTP/2 transport: some function of {@link Probe#grpcTransport()} is in
   * it. A binary that lists grpc-go among its modules but uses only its {@code codes} or {@code status} packages,
   * and a GOPATH build without grpc-go (containerd's ttrpc shims), do not: {@code inspect DIR} does not count them
   * as Go gRPC binaries.
   */
  public boolean linksGrpc() {
    return resolution != null && Probe.grpcTransport().stream().anyMatch(resolution.functions()::containsKey);
  }

  /**
   * The verdict: whether gospan produces spans for this binary (client, server, or server spans
   * of gRPC served through a ServeHTTP path). {@code gospan run} traces exactly such binaries.
   */
  public boolean producesSpans() {
    return clientSpans() || serverSpans() || serveHttp(Probe.HttpServer.XNET).spans() || serveHttp(Probe.HttpServer.NETHTTP).spans();
  }

  /** Why the binary gets no span ({@code "unsupported: ..."}); empty when {@link #producesSpans()}. */
  public Optional<String> unsupported() {
    if (producesSpans()) {
      return Optional.empty();
    }
    String grpc = !moduleInfo
        ? grpcInferredFrom.map(f -> grpcVersion.orElse("?") + ", inferred from " + f).orElse("unknown (no module information)")
        : grpcVersion.orElse("not linked");
    String why = "";
    if (resolution != null) {
      // the first refusal of grpc-go's own probes says why (the ServeHTTP ones are optional paths)
      for (Probe p : Probe.grpcTransport(probeSet)) {
        ProbePlan plan = plans.get(p);
        if (plan.action() == Action.REFUSE) {
          why = ": " + p.name().toLowerCase(Locale.ROOT) + " refused: " + plan.reason();
          break;
        }
      }
    }
    return Optional.of("unsupported: gospan will produce no span for this binary (grpc-go " + grpc + ")"
        + (resolution != null && resolution.values().isEmpty() ? "; stripped and not in the offsets catalog" : "") + why);
  }

  /**
   * Where the offsets came from, joined by {@code +}: "catalog", "dwarf", "typeinfo" (the binary's runtime type
   * information), "code" (argument registers from the function's machine code), e.g. "catalog+dwarf" or
   * "code+typeinfo" ("none" without any).
   */
  public String offsetsSource() {
    if (resolution == null) {
      return "none";
    }
    return resolution.values().values().stream()
        .map(v -> v.source().name().toLowerCase(Locale.ROOT))
        .filter(s -> !s.equals("symtab") && !s.equals("itablinks"))
        .map(s -> s.startsWith("dwarf") ? "dwarf" : s)
        .distinct()
        .sorted()
        .reduce((a, b) -> a + "+" + b)
        .orElse("none");
  }
}
