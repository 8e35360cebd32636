package io.gospan.offsets.dwarf;

import java.util.List;

/**
 * The parameters of one function at its entry, from its DW_TAG_subprogram.
 *
 * @param name Go symbol name of the function
 * @param lowPc DW_AT_low_pc: the entry address
 * @param parameters the DW_TAG_formal_parameter children, in DWARF order (results included, flagged)
 * @param abi {@link Abi#REGISTER} when any piece is in a register at entry, else {@link Abi#STACK} when any
 *     is on the stack, else {@link Abi#NONE}
 */
public record FunctionParameters(String name, long lowPc, List<Parameter> parameters, Abi abi) {
  /** Go calling convention as seen in a function's DWARF. */
  public enum Abi {
    /** ABIInternal, Go 1.17+ on amd64: arguments in RAX, RBX, RCX, RDI, RSI, R8, R9, R10, R11. */
    REGISTER,
    /** ABI0: arguments on the stack (all Go before 1.17). */
    STACK,
    /** The function has no parameter with a location at entry. */
    NONE
  }

  /** The first parameter with this name. */
  public java.util.Optional<Parameter> parameter(String paramName) {
    return parameters.stream().filter(p -> p.name().equals(paramName)).findFirst();
  }
}
