package io.gospan.offsets.resolve;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.elf.ByteReader;
import io.gospan.offsets.pclntab.ModuleData;
import io.gospan.offsets.pclntab.RuntimeTypes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * How to get from a connection held in a {@code net.Conn} (or a wider interface) to its socket, for every
 * concrete type the binary stores in one: a bounded table the BPF programs walk ({@code struct conn_type}
 * in {@code bpf/grpc_events.h}), computed from Go's runtime type information, which every Go binary carries,
 * stripped or not.
 *
 * <p>The itabs the binary's {@code moduledata.itablinks} lists name each (concrete type, interface) pair the
 * program converts; an interface is <em>a connection interface</em> when it has {@code net.Conn}'s methods
 * ({@code Read}, {@code Write}, {@code Close}, {@code LocalAddr}, {@code RemoteAddr}, {@code SetDeadline},
 * {@code SetReadDeadline}, {@code SetWriteDeadline}). For each concrete type of such an itab (a pointer to a
 * struct, or a struct held indirectly), the struct's fields are read in declaration order, struct fields
 * held by value entered (to depth {@value #MAX_DEPTH}), and the first field that leads to the connection
 * decides:
 *
 * <ul>
 *   <li>a {@code *net.netFD}: the type holds the socket itself ({@link ConnKind#SOCKET}: {@code *net.TCPConn},
 *       {@code *net.UnixConn} through their embedded {@code net.conn}, or a struct embedding one by value);
 *   <li>a field of a connection interface type: a wrapper ({@link ConnKind#INTERFACE}: {@code crypto/tls.Conn}'s
 *       {@code conn}, grpc-go's {@code syscallConn}, cmux's {@code MuxConn}, h2c's {@code bufConn}, ...);
 *   <li>failing both, a pointer to a struct that resolves itself ({@link ConnKind#POINTER}: e.g. a wrapper
 *       embedding {@code *net.TCPConn}).
 * </ul>
 *
 * <p>A struct of one pointer (Go stores it directly in the interface's data word: {@code abi.TFlagDirectIface}) is
 * resolved as the type its pointer points to ({@link Entry#direct()}). A wrapper holding two connections (a
 * proxy's two ends) is resolved through the first one. A type leading nowhere is listed in {@link
 * #unresolved()} with the reason; its connections carry no socket.
 *
 * <p>Addresses are link-time addresses: a position-independent executable's move with its load bias, which
 * the BPF programs subtract.
 *
 * @param entries the table, at most the {@code max} given to {@link #of}; a {@link ConnKind#POINTER} entry's
 *     {@link Entry#next()} indexes it
 * @param unresolved concrete types of connection itabs that lead to no socket, with the reason, by type name
 * @param dropped entries left out because the table was full, by type name
 * @param netFdSysfd the offset of {@code netFD.pfd.Sysfd} (net fd_posix.go, internal/poll fd_unix.go: the
 *     file descriptor behind a {@link ConnKind#SOCKET} type's {@code *net.netFD}), bytes; -1 when unknown
 * @param unavailable why the runtime type information could not be read; null when it was
 */
public record ConnTypes(
    List<Entry> entries, Map<String, String> unresolved, List<String> dropped, long netFdSysfd, String unavailable) {

  /**
   * One table entry.
   *
   * @param itab the link-time address of the itab a connection interface value of this type holds; 0 for
   *     an entry reached only through a {@link ConnKind#POINTER} entry
   * @param kind how it leads on
   * @param offset bytes from the start of the struct
   * @param next for {@link ConnKind#POINTER}: the index of the pointee's entry; else -1
   * @param type the concrete type, e.g. {@code *github.com/soheilhy/cmux.MuxConn}
   * @param iface the interface of the itab, e.g. {@code net.Conn}; empty for an entry without itab
   * @param via the field path that leads on, e.g. {@code Conn} or {@code conn.fd}; for a {@code direct} type,
   *     the path in the struct its one pointer points to
   * @param direct the type is a struct of one pointer, stored in the interface's data word itself: the
   *     offset is into what that pointer points to
   */
  public record Entry(long itab, ConnKind kind, long offset, int next, String type, String iface, String via, boolean direct) {}

  /** Struct fields held by value entered, at most. */
  static final int MAX_DEPTH = 3;
  /** Pointer hops followed from one type, at most (the BPF walk is bounded too). */
  static final int MAX_POINTER_HOPS = 3;

  private static final List<String> CONN_METHODS = List.of(
      "Close", "LocalAddr", "Read", "RemoteAddr", "SetDeadline", "SetReadDeadline", "SetWriteDeadline", "Write");
  private static final String NET_FD = "*net.netFD";

  public ConnTypes {
    entries = List.copyOf(entries);
    unresolved = Collections.unmodifiableMap(new LinkedHashMap<>(unresolved));
    dropped = List.copyOf(dropped);
  }

  /** No table: the runtime type information could not be read ({@code why}). */
  public static ConnTypes unavailable(String why) {
    return new ConnTypes(List.of(), Map.of(), List.of(), -1, why);
  }

  /** Whether a connection of some type reaches a socket ({@code *net.TCPConn}, {@code *net.UnixConn}, ...). */
  public boolean identifiesSockets() {
    return entries.stream().anyMatch(e -> e.kind() == ConnKind.SOCKET);
  }

  /** The entry of the itab whose concrete type is {@code type} (e.g. {@code *net.TCPConn}) and interface {@code net.Conn}. */
  public Optional<Entry> netConn(String type) {
    return entries.stream().filter(e -> e.type().equals(type) && e.iface().equals("net.Conn")).findFirst();
  }

  /**
   * Reads the table of {@code binary}.
   *
   * @param max the table's size ({@code GOSPAN_CONN_TYPES}); entries past it are {@link #dropped()}, the
   *     standard library's and grpc-go's kept first
   * @throws CorruptBinaryException the type information points outside the file
   */
  public static ConnTypes of(GoBinary binary, int max) throws GoBinaryException {
    Optional<ModuleData.ItabTable> table;
    int minor;
    try {
      minor = binary.buildInfo().goMinorVersion();
      if (minor < 0) {
        return unavailable("Go version " + binary.buildInfo().goVersion() + " is not a release: runtime type layouts undecidable");
      }
      table = binary.itabTable();
    } catch (RuntimeException e) {
      throw new CorruptBinaryException(binary.path() + ": runtime type information: malformed data (" + e + ")", e);
    }
    if (table.isEmpty()) {
      return unavailable("no runtime type information found (moduledata or its itablinks not recognised)");
    }
    try {
      return new Builder(binary, new RuntimeTypes(binary.elf(), new long[] {table.get().types(), table.get().etypes()}, minor))
          .build(table.get().itablinks(), max);
    } catch (RuntimeException e) {
      throw new CorruptBinaryException(binary.path() + ": runtime type information: malformed data (" + e + ")", e);
    }
  }

  /** What a type resolves to. */
  private record Resolved(ConnKind kind, long offset, long pointee, String via, String unresolved, boolean direct) {
    Resolved(ConnKind kind, long offset, long pointee, String via, String unresolved) {
      this(kind, offset, pointee, via, unresolved, false);
    }

    static Resolved no(String why) {
      return new Resolved(null, 0, 0, null, why);
    }

    Resolved asDirect() {
      return ok() ? new Resolved(kind, offset, pointee, via, null, true) : this;
    }

    boolean ok() {
      return kind != null;
    }
  }

  private static final class Builder {
    private final GoBinary binary;
    private final RuntimeTypes rt;
    private final Map<Long, Boolean> connInterfaces = new HashMap<>();
    private final Map<Long, Resolved> resolved = new HashMap<>();
    private final Map<Long, String> names = new HashMap<>();
    private long sysfd = -1;

    Builder(GoBinary binary, RuntimeTypes rt) {
      this.binary = binary;
      this.rt = rt;
    }

    String name(long type) throws GoBinaryException {
      String n = names.get(type);
      if (n == null) {
        n = rt.symbolTypeString(type);
        names.put(type, n);
      }
      return n;
    }

    boolean connInterface(long type) throws GoBinaryException {
      Boolean c = connInterfaces.get(type);
      if (c == null) {
        c = rt.kind(type) == RuntimeTypes.KIND_INTERFACE_VALUE && new HashSet<>(rt.interfaceMethods(type)).containsAll(CONN_METHODS);
        connInterfaces.put(type, c);
      }
      return c;
    }

    ConnTypes build(long[] itablinks, int max) throws GoBinaryException {
      // (itab, concrete type, interface) of every connection itab
      record Itab(long address, long type, long iface) {}
      List<Itab> itabs = new ArrayList<>();
      for (long itab : itablinks) {
        ByteReader r = new ByteReader(binary.elf().readAddress(itab, 16), "itab");
        long inter = r.u64();
        long type = r.u64();
        if (connInterface(inter)) {
          itabs.add(new Itab(itab, type, inter));
        }
      }
      // the standard library's and grpc-go's types first: they fit whatever the table's size
      itabs.sort(java.util.Comparator.comparingInt((Itab i) -> {
        try {
          return rank(name(i.type()));
        } catch (GoBinaryException e) {
          return 3;
        }
      }).thenComparingLong(Itab::address));
      List<Entry> entries = new ArrayList<>();
      Map<Long, Integer> entryOfType = new HashMap<>(); // a type's first entry, for POINTER entries to name
      Map<String, String> unresolvedOut = new LinkedHashMap<>();
      List<String> dropped = new ArrayList<>();
      for (Itab i : itabs) {
        Resolved r = resolve(i.type(), new HashSet<>(), 0);
        String typeName = name(i.type());
        if (!r.ok()) {
          unresolvedOut.putIfAbsent(typeName, r.unresolved());
          continue;
        }
        int before = entries.size();
        int index = add(i.address(), i.type(), r, name(i.iface()), entries, entryOfType, max, 0);
        if (index < 0) {
          entries.subList(before, entries.size()).clear();
          entryOfType.values().removeIf(x -> x >= before);
          if (!dropped.contains(typeName)) {
            dropped.add(typeName);
          }
        }
      }
      return new ConnTypes(entries, unresolvedOut, dropped, sysfd, null);
    }

    /** Adds the entry of {@code type} (and the chain its pointers lead to); its index, or -1 when full. */
    private int add(long itab, long type, Resolved r, String iface, List<Entry> entries, Map<Long, Integer> entryOfType,
        int max, int hops) throws GoBinaryException {
      int next = -1;
      if (r.kind() == ConnKind.POINTER) {
        Integer known = entryOfType.get(r.pointee());
        if (known != null) {
          next = known;
        } else {
          Resolved p = resolve(r.pointee(), new HashSet<>(), 0);
          next = add(0, r.pointee(), p, "", entries, entryOfType, max, hops + 1);
          if (next < 0) {
            return -1;
          }
        }
      }
      if (entries.size() >= max) {
        return -1;
      }
      entries.add(new Entry(itab, r.kind(), r.offset(), next, name(type), iface, r.via(), r.direct()));
      entryOfType.putIfAbsent(type, entries.size() - 1);
      return entries.size() - 1;
    }

    /** Where the connection of a value of {@code type} is. */
    Resolved resolve(long type, Set<Long> visiting, int hops) throws GoBinaryException {
      Resolved known = resolved.get(type);
      if (known != null) {
        return known;
      }
      if (!visiting.add(type)) {
        return Resolved.no("its pointers lead back to itself");
      }
      Resolved r;
      int kind = rt.kind(type);
      if (kind == RuntimeTypes.KIND_POINTER) {
        long elem = rt.elem(type);
        r = rt.kind(elem) == RuntimeTypes.KIND_STRUCT_VALUE ? inStruct(elem, 0, "", 0, visiting, hops)
            : Resolved.no("a pointer to a " + kindName(rt.kind(elem)) + ", not to a struct");
      } else if (kind == RuntimeTypes.KIND_STRUCT_VALUE) {
        r = rt.size(type) == 8 && rt.ptrBytes(type) == 8 ? direct(type, visiting, hops) : inStruct(type, 0, "", 0, visiting, hops);
      } else {
        r = Resolved.no("a " + kindName(kind) + ", not a struct or a pointer to one");
      }
      visiting.remove(type);
      resolved.put(type, r);
      return r;
    }

    /**
     * A struct of one pointer, stored directly in the interface's data word (Go's {@code TFlagDirectIface}:
     * size and pointer bytes one word): the data word is that pointer, so the struct resolves as what it
     * points to.
     */
    private Resolved direct(long struct, Set<Long> visiting, int hops) throws GoBinaryException {
      List<RuntimeTypes.Field> fields = rt.structFields(struct);
      RuntimeTypes.Field p = null;
      for (RuntimeTypes.Field f : fields) {
        if (rt.kind(f.type()) == RuntimeTypes.KIND_POINTER) {
          p = f;
        }
      }
      if (p == null || p.offset() != 0 || hops >= MAX_POINTER_HOPS) {
        return Resolved.no("a one-word struct stored directly in the interface word, holding no pointer to a connection");
      }
      Resolved r = resolve(p.type(), visiting, hops + 1);
      return r.ok() ? r.asDirect()
          : Resolved.no("stored directly in the interface word, its pointer " + p.name() + ": " + r.unresolved());
    }

    private Resolved inStruct(long struct, long base, String prefix, int depth, Set<Long> visiting, int hops)
        throws GoBinaryException {
      List<RuntimeTypes.Field> fields = rt.structFields(struct);
      List<RuntimeTypes.Field> pointers = new ArrayList<>();
      for (RuntimeTypes.Field f : fields) {
        int kind = rt.kind(f.type());
        String via = prefix + f.name();
        if (kind == RuntimeTypes.KIND_POINTER && name(f.type()).equals(NET_FD)) {
          if (sysfd < 0) {
            sysfd = sysfd(rt.elem(f.type()));
          }
          return new Resolved(ConnKind.SOCKET, base + f.offset(), 0, via, null);
        }
        if (kind == RuntimeTypes.KIND_INTERFACE_VALUE && connInterface(f.type())) {
          return new Resolved(ConnKind.INTERFACE, base + f.offset(), 0, via, null);
        }
        if (kind == RuntimeTypes.KIND_STRUCT_VALUE && depth < MAX_DEPTH) {
          Resolved inner = inStruct(f.type(), base + f.offset(), via + ".", depth + 1, visiting, hops);
          if (inner.ok()) {
            return inner;
          }
        }
        if (kind == RuntimeTypes.KIND_POINTER) {
          pointers.add(new RuntimeTypes.Field(via, base + f.offset(), f.type(), f.embedded()));
        }
      }
      if (hops < MAX_POINTER_HOPS) {
        for (RuntimeTypes.Field p : pointers) {
          if (resolve(p.type(), visiting, hops + 1).ok()) {
            return new Resolved(ConnKind.POINTER, p.offset(), p.type(), p.name(), null);
          }
        }
      }
      return Resolved.no("no field holds a connection (net.Conn or the like), a *net.netFD, or a pointer to one");
    }

    /** {@code netFD.pfd.Sysfd}'s offset in the struct {@code net.netFD}; -1 when not there. */
    private long sysfd(long netFd) throws GoBinaryException {
      if (rt.kind(netFd) != RuntimeTypes.KIND_STRUCT_VALUE) {
        return -1;
      }
      for (RuntimeTypes.Field f : rt.structFields(netFd)) {
        if (f.name().equals("pfd") && rt.kind(f.type()) == RuntimeTypes.KIND_STRUCT_VALUE) {
          for (RuntimeTypes.Field g : rt.structFields(f.type())) {
            if (g.name().equals("Sysfd")) {
              return f.offset() + g.offset();
            }
          }
        }
      }
      return -1;
    }

    private static int rank(String type) {
      String t = type.startsWith("*") ? type.substring(1) : type;
      if (t.startsWith("net.") || t.startsWith("crypto/tls.")) {
        return 0;
      }
      if (t.startsWith("google.golang.org/grpc/") || t.startsWith("golang.org/x/net/")) {
        return 1;
      }
      return 2;
    }

    private static String kindName(int kind) {
      return switch (kind) {
        case 1 -> "bool";
        case 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 -> "integer";
        case 17 -> "array";
        case 18 -> "channel";
        case 19 -> "func";
        case 20 -> "interface";
        case 21 -> "map";
        case 22 -> "pointer";
        case 23 -> "slice";
        case 24 -> "string";
        case 25 -> "struct";
        default -> "kind " + kind;
      };
    }
  }
}
