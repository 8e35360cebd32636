package io.gospan.offsets;

import java.util.Map;
import java.util.Optional;

/**
 * Addresses of Go itabs (interface method tables), keyed {@code "<concrete type>,<interface type>"} as in the
 * symbol name after {@code go:itab.} (go1.20+) or {@code go.itab.} (before), e.g.
 * {@code "*net.TCPConn,net.Conn"}. A probe compares the first word of a {@code net.Conn} interface value with
 * these to know the dynamic type.
 *
 * @param addresses virtual address of each requested itab that exists in the binary
 * @param source how they were found
 * @param detail for {@link Source#UNAVAILABLE}: why; empty otherwise
 */
public record ItabAddresses(Map<String, Long> addresses, Source source, String detail) {
  /** How itab addresses were found. */
  public enum Source {
    /** From {@code .symtab} symbols. */
    SYMTAB,
    /** Without symbols, from {@code runtime.firstmoduledata.itablinks} and the runtime type names. */
    ITABLINKS,
    /** Could not be determined (no symbols and no recognisable moduledata); absent, not guessed. */
    UNAVAILABLE
  }

  public Optional<Long> address(String name) {
    return Optional.ofNullable(addresses.get(name));
  }

  public boolean available() {
    return source != Source.UNAVAILABLE;
  }
}
