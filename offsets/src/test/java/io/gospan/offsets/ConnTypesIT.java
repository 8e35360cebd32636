package io.gospan.offsets;

import static org.assertj.core.api.Assertions.assertThat;

import io.gospan.offsets.resolve.ConnKind;
import io.gospan.offsets.resolve.ConnTypes;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The connection types read from the runtime type information ({@link ConnTypes}) agree with the symbol
 * table and DWARF of the same build, and the stripped build (no symbols, no DWARF) gives the same table: each
 * entry's itab is the {@code go:itab.<type>,<interface>} symbol's address, each socket or wrapper offset is
 * DWARF's offset of the field path it names, and {@code netFD.pfd.Sysfd} is DWARF's; across the Go
 * releases whose type layouts differ (name length encoding before go1.17, offsetAnon before go1.19).
 */
class ConnTypesIT {

  @Test
  void theTableAgreesWithSymbolsAndDwarfAndTheStrippedBuildGivesTheSame() throws Exception {
    for (String[] f : new String[][] {
        {"1.16.15", "v1.40.0"}, {"1.17.13", "v1.40.0"}, {"1.19.13", "v1.50.1"}, {"1.22.12", "v1.60.1"},
        {"1.26.8", "v1.85.0"}}) {
      Path dir = GoFixtures.fixture(f[0], f[1]);
      String what = "go" + f[0] + " grpc-go " + f[1];
      try (GoBinary full = GoBinary.open(dir.resolve("app"));
          GoBinary stripped = GoBinary.open(dir.resolve("app.stripped"))) {
        ConnTypes table = ConnTypes.of(full, 32);
        assertThat(table.unavailable()).as(what).isNull();
        assertThat(ConnTypes.of(stripped, 32)).as("%s: stripped", what).isEqualTo(table);
        Map<String, ConnTypes.Entry> byType = table.entries().stream()
            .filter(e -> e.iface().equals("net.Conn"))
            .collect(Collectors.toMap(ConnTypes.Entry::type, e -> e, (a, b) -> a));
        assertThat(byType.get("*net.TCPConn")).as(what).extracting(ConnTypes.Entry::kind, ConnTypes.Entry::via)
            .containsExactly(ConnKind.SOCKET, "conn.fd");
        assertThat(byType.get("*net.UnixConn")).as(what).extracting(ConnTypes.Entry::kind).isEqualTo(ConnKind.SOCKET);
        assertThat(byType.get("*crypto/tls.Conn")).as(what).extracting(ConnTypes.Entry::kind, ConnTypes.Entry::via)
            .containsExactly(ConnKind.INTERFACE, "conn");
        assertThat(byType.get("*google.golang.org/grpc/internal/credentials.syscallConn")).as(what)
            .extracting(ConnTypes.Entry::kind, ConnTypes.Entry::via).containsExactly(ConnKind.INTERFACE, "Conn");
        // the fixture's own wrappers (grpcapp/main.go): one of each shape
        assertThat(byType.get("*main.countingConn")).as(what)
            .extracting(ConnTypes.Entry::kind, ConnTypes.Entry::offset, ConnTypes.Entry::via)
            .containsExactly(ConnKind.INTERFACE, 0L, "Conn");
        ConnTypes.Entry tracked = byType.get("*main.trackedConn");
        assertThat(tracked).as(what).extracting(ConnTypes.Entry::kind, ConnTypes.Entry::offset, ConnTypes.Entry::via)
            .containsExactly(ConnKind.POINTER, 8L, "TCPConn");
        assertThat(table.entries().get(tracked.next()).type()).isEqualTo("*net.TCPConn");
        assertThat(byType.get("main.keepAliveConn")).as("%s: a one-pointer struct, in the data word", what)
            .extracting(ConnTypes.Entry::kind, ConnTypes.Entry::offset, ConnTypes.Entry::via, ConnTypes.Entry::direct)
            .containsExactly(ConnKind.SOCKET, byType.get("*net.TCPConn").offset(), "conn.fd", true);
        assertThat(byType.get("*main.embeddedConn")).as(what)
            .extracting(ConnTypes.Entry::kind, ConnTypes.Entry::via).containsExactly(ConnKind.SOCKET, "TCPConn.conn.fd");
        assertThat(table.unresolved()).as(what).isEmpty();
        GoBinary.Dwarf dwarf = full.dwarf();
        for (ConnTypes.Entry e : table.entries()) {
          if (e.itab() != 0) {
            String name = e.type() + "," + e.iface();
            assertThat(full.itabs(List.of(name)).address(name)).as("%s: itab %s", what, name).hasValue(e.itab());
          }
          if (e.kind() != ConnKind.POINTER && !e.direct()) {
            String struct = e.type().startsWith("*") ? e.type().substring(1) : e.type();
            assertThat(dwarf.memberOffset(struct, e.via())).as("%s: %s.%s", what, struct, e.via()).hasValue(e.offset());
          }
        }
        assertThat(table.netFdSysfd()).as(what).isEqualTo(dwarf.memberOffset("net.netFD", "pfd.Sysfd").orElseThrow());
      }
    }
  }
}
