/**
 * Go runtime tables that survive stripping: {@link io.gospan.offsets.pclntab.Pclntab} ({@code .gopclntab},
 * function names and entry addresses, formats of go1.2, go1.16, go1.18 and go1.20+),
 * {@link io.gospan.offsets.pclntab.ModuleData} ({@code runtime.firstmoduledata}: text start, type data,
 * itablinks) and {@link io.gospan.offsets.pclntab.RuntimeTypes} (naming itabs from runtime type data).
 * Source: Go src/debug/gosym/pclntab.go, src/runtime/symtab.go, src/internal/abi (go1.16–go1.26).
 */
package io.gospan.offsets.pclntab;
