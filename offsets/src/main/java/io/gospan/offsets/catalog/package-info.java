/**
 * The embedded offsets catalog ({@link io.gospan.offsets.catalog.OffsetsCatalog}, resource
 * {@code io/gospan/offsets/catalog.json}): every {@link io.gospan.offsets.resolve.ProbeField}
 * value observed in real builds, keyed by the version of the module that defines it (grpc-go,
 * golang.org/x/net, Go itself) and, for argument locations, by the Go ABI. Its generator
 * ({@link io.gospan.offsets.catalog.CatalogGenerator}, run by {@code offsets/generate-catalog.sh})
 * builds a small grpc-go program per version and reads its DWARF with the project's own inspector.
 */
package io.gospan.offsets.catalog;
