package io.gospan.offsets.buildinfo;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.elf.ElfFile;
import io.gospan.offsets.elf.ElfSection;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.TreeSet;

/**
 * grpc-go's version from its user agent, for binaries whose build info lists no modules (GOPATH
 * builds, as Debian builds Go programs): grpc-go's client sends {@code grpc-go/<Version>} (grpc-go
 * internal/transport/http2_client.go, {@code grpcUA = "grpc-go/" + grpc.Version}, v1.0–v1.85), a
 * constant the compiler folds into one string literal in the read-only data ({@code .rodata}).
 *
 * <p>Go string literals are not NUL-terminated: the linker lays them out back to back (same-length
 * literals sorted), so the bytes after the version belong to the next literal. The version is read as
 * {@code MAJOR.MINOR.PATCH[-dev|-pre...]}; when several copies of the string disagree (a digit of the
 * next literal taken for the patch), the shortest one that every other one starts with wins, else there
 * is no answer. A binary that never dials (a server only) has no user agent: the linker dropped it.
 */
public final class GrpcUserAgent {
  private static final byte[] PREFIX = "grpc-go/".getBytes(StandardCharsets.US_ASCII);
  /** Bytes scanned at most: a Go binary's .rodata is a few tens of MiB at most. */
  private static final long MAX_SCAN = 256L << 20;

  private GrpcUserAgent() {}

  /**
   * What the user agent says.
   *
   * @param version grpc-go's module version, e.g. {@code v1.33.3}; null when there is none to trust
   * @param text the user agent as found, e.g. {@code grpc-go/1.33.3} (ASCII digits, dots, letters
   *     and dashes only); null when none was found
   * @param reason why there is no version, else null
   */
  public record Found(String version, String text, String reason) {}

  /**
   * Scans {@code .rodata} (else the read-only PT_LOAD segment) for {@code grpc-go/<version>}.
   *
   * @throws CorruptBinaryException the section lies outside the file
   */
  public static Found find(ElfFile elf) throws CorruptBinaryException {
    ByteBuffer data;
    Optional<ElfSection> rodata = elf.section(".rodata");
    if (rodata.isPresent() && rodata.get().type() != ElfSection.SHT_NOBITS && !rodata.get().isCompressed()) {
      data = elf.rawData(rodata.get());
    } else {
      Optional<long[]> ro = elf.readOnlyData();
      if (ro.isEmpty()) {
        return new Found(null, null, "no .rodata section to read grpc-go's user agent from");
      }
      data = elf.readAddress(ro.get()[0], ro.get()[1] - ro.get()[0]);
    }
    return scan(data);
  }

  /** Scans raw bytes (exposed for tests). */
  public static Found scan(ByteBuffer data) {
    TreeSet<String> seen = new TreeSet<>();
    int limit = (int) Math.min(data.limit(), MAX_SCAN);
    // copied out in chunks: a byte array scans several times faster than a mapped buffer's get(i)
    byte[] chunk = new byte[1 << 20];
    for (int base = 0; base < limit; base += chunk.length - PREFIX.length) {
      int n = Math.min(chunk.length, limit - base);
      data.get(base, chunk, 0, n);
      outer:
      for (int i = 0; i + PREFIX.length <= n; i++) {
        if (chunk[i] != 'g') {
          continue;
        }
        for (int k = 1; k < PREFIX.length; k++) {
          if (chunk[i + k] != PREFIX[k]) {
            continue outer;
          }
        }
        String v = version(data, base + i + PREFIX.length, limit);
        if (v != null) {
          seen.add(v);
        }
      }
      if (base + n >= limit) {
        break;
      }
    }
    if (seen.isEmpty()) {
      return new Found(null, null, "no grpc-go user agent (\"grpc-go/<version>\") in the binary's read-only data"
          + " (a binary that only serves gRPC has none)");
    }
    String best = seen.first(); // shortest common prefix sorts first
    for (String s : seen) {
      if (!s.startsWith(best)) {
        return new Found(null, "grpc-go/" + best, "differing grpc-go user agents in the binary: " + String.join(", ", seen));
      }
    }
    String text = "grpc-go/" + best;
    if (!best.matches("[0-9]+\\.[0-9]+\\.[0-9]+")) {
      return new Found(null, text, "grpc-go user agent " + text + " is not a release (a development build of grpc-go)");
    }
    return new Found("v" + best, text, null);
  }

  /** {@code N.N.N} with an optional {@code -suffix} of letters and digits, or null. */
  private static String version(ByteBuffer b, int at, int limit) {
    StringBuilder sb = new StringBuilder();
    int dots = 0;
    int i = at;
    while (i < limit && sb.length() < 24) {
      char c = (char) (b.get(i) & 0xff);
      if (c >= '0' && c <= '9') {
        sb.append(c);
      } else if (c == '.' && dots < 2 && sb.length() > 0 && sb.charAt(sb.length() - 1) != '.') {
        sb.append(c);
        dots++;
      } else {
        break;
      }
      i++;
    }
    if (dots != 2 || sb.charAt(sb.length() - 1) == '.') {
      return null;
    }
    // "-dev", "-pre1": grpc-go's development versions; only lower-case letters and digits follow.
    if (i + 1 < limit && b.get(i) == '-' && b.get(i + 1) >= 'a' && b.get(i + 1) <= 'z') {
      sb.append('-');
      i++;
      while (i < limit && sb.length() < 32) {
        char c = (char) (b.get(i) & 0xff);
        if (!(c >= 'a' && c <= 'z' || c >= '0' && c <= '9')) {
          break;
        }
        sb.append(c);
        i++;
      }
    }
    return sb.toString();
  }
}
