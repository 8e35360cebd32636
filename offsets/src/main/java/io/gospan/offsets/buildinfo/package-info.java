/**
 * Go build info from {@code .go.buildinfo}: Go version, main module, dependencies with {@code =>}
 * replacements, build settings; both the pointer format (before go1.18) and the inline varint format
 * (go1.18+). Source: Go src/debug/buildinfo/buildinfo.go and src/runtime/debug/mod.go (go1.26).
 */
package io.gospan.offsets.buildinfo;
