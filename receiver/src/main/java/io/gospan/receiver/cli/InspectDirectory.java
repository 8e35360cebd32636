package io.gospan.receiver.cli;

import io.gospan.offsets.CorruptBinaryException;
import io.gospan.offsets.GoBinary;
import io.gospan.offsets.GoBinaryException;
import io.gospan.offsets.NotElfException;
import io.gospan.offsets.NotGoBinaryException;
import io.gospan.offsets.UnsupportedArchitectureException;
import io.gospan.receiver.discovery.BinaryInspection;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * {@code gospan inspect DIR}: every ELF Go binary under a directory (an unpacked container image's root file
 * system, {@code /usr/bin}), one verdict each, decided by {@link BinaryInspection} exactly as for {@code inspect
 * PATH} and {@code gospan run}; the exit code is a gate ({@link #inspect}).
 *
 * <p>Bounded: symbolic links are never followed (what one points to inside the directory is inspected where it
 * lies, what it points to outside is not inspected, and a link cycle is no cycle), nor are directories on another
 * file system (a {@code /proc} under a root file system); only regular files are opened (FIFOs, sockets and
 * devices are counted, never opened); a file that does not start with the ELF magic is counted without being
 * inspected. A file or directory that cannot be read, or a corrupt ELF file, gets one line on stderr and the walk
 * goes on. Entries are visited in name order, a directory's files before its subdirectories.
 *
 * <p>Text output: one line per Go binary, {@code PATH: traceable: <verdict>}, {@code PATH: unsupported: <why>} or
 * {@code PATH: not a Go gRPC binary (...)}, then a summary line. JSON output: one {@link InspectReport} per line for
 * the same binaries and for each file that could not be read ({@code "status": "error"}); the summary on stderr.
 */
final class InspectDirectory {
  private static final byte[] ELF_MAGIC = {0x7f, 'E', 'L', 'F'};

  private final InspectCommand.Settings settings;
  private final InspectCommand.Output output;
  private final PrintStream out;
  private final PrintStream err;

  // what the walk found
  private int traceable;
  private int unsupported;
  private int notGrpc;
  private int notGo;
  private int otherArch;
  private int notElf;
  private int links;
  private int special;
  private int otherFileSystems;
  private int errors;

  InspectDirectory(InspectCommand.Settings settings, InspectCommand.Output output, PrintStream out, PrintStream err) {
    this.settings = settings;
    this.output = output;
    this.out = out;
    this.err = err;
  }

  /**
   * Walks {@code dir} and prints a verdict per Go binary.
   *
   * @return {@link ExitCodes#OK} when every Go binary linking grpc-go's transport under it produces spans (none is
   *     also OK); {@link ExitCodes#UNSUPPORTED} when one does not; else {@link ExitCodes#ERROR} when a file or
   *     directory could not be read or an ELF file is corrupt (what it holds is unknown)
   */
  int inspect(Path dir) {
    Object device;
    try {
      device = Files.getAttribute(dir, "unix:dev");
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      error(dir, "cannot read " + esc(dir) + ": " + esc(e.getMessage()));
      return ExitCodes.ERROR;
    }
    Deque<Path> dirs = new ArrayDeque<>();
    dirs.push(dir);
    while (!dirs.isEmpty()) {
      Path d = dirs.pop();
      List<Path> entries = new ArrayList<>();
      try (DirectoryStream<Path> s = Files.newDirectoryStream(d)) {
        s.forEach(entries::add);
      } catch (AccessDeniedException e) {
        error(d, "permission denied reading directory " + esc(d));
        continue;
      } catch (IOException | java.nio.file.DirectoryIteratorException e) {
        error(d, "cannot read directory " + esc(d) + ": " + esc(e.getMessage()));
        continue;
      }
      entries.sort(null);
      List<Path> subdirs = new ArrayList<>();
      for (Path p : entries) {
        BasicFileAttributes a;
        try {
          a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
          error(p, "cannot read " + esc(p) + ": " + esc(e.getMessage()));
          continue;
        }
        if (a.isSymbolicLink()) {
          links++;
        } else if (a.isDirectory()) {
          if (sameFileSystem(p, device)) {
            subdirs.add(p);
          }
        } else if (a.isRegularFile()) {
          file(p);
        } else {
          special++; // a FIFO, socket or device: never opened
        }
      }
      for (int i = subdirs.size() - 1; i >= 0; i--) {
        dirs.push(subdirs.get(i));
      }
    }
    summary(dir);
    return unsupported > 0 ? ExitCodes.UNSUPPORTED : errors > 0 ? ExitCodes.ERROR : ExitCodes.OK;
  }

  private boolean sameFileSystem(Path p, Object device) {
    try {
      if (device.equals(Files.getAttribute(p, "unix:dev", LinkOption.NOFOLLOW_LINKS))) {
        return true;
      }
      otherFileSystems++;
    } catch (IOException e) {
      error(p, "cannot read " + esc(p) + ": " + esc(e.getMessage()));
    }
    return false;
  }

  /** One regular file: counted unless it is ELF; inspected as {@code inspect PATH} would. */
  private void file(Path p) {
    try {
      if (!elf(p)) {
        notElf++;
        return;
      }
    } catch (AccessDeniedException e) {
      error(p, "permission denied reading " + esc(p));
      return;
    } catch (IOException e) {
      error(p, "cannot read " + esc(p) + ": " + esc(e.getMessage()));
      return;
    }
    try (GoBinary binary = GoBinary.open(p)) {
      BinaryInspection inspection = settings.inspect(p, binary);
      InspectReport report = InspectReport.of(inspection, settings.runsTraced());
      String line;
      switch (InspectReport.status(inspection)) {
        case TRACEABLE -> {
          traceable++;
          line = "traceable: " + report.verdict().text();
        }
        case UNSUPPORTED -> {
          unsupported++;
          line = report.verdict().text();
        }
        default -> {
          notGrpc++;
          line = "not a Go gRPC binary (" + inspection.goVersion() + ", "
              + (inspection.moduleInfo() && inspection.grpcVersion().isPresent()
                  ? "grpc-go " + inspection.grpcVersion().get() + " listed, its HTTP/2 transport not linked"
                  : "grpc-go's HTTP/2 transport not linked") + ")";
        }
      }
      if (output == InspectCommand.Output.JSON) {
        out.println(report.json());
      } else {
        out.println(esc(p) + ": " + line);
      }
    } catch (UnsupportedArchitectureException e) {
      otherArch++;
    } catch (NotGoBinaryException e) {
      notGo++;
    } catch (NotElfException | CorruptBinaryException e) {
      error(p, "corrupt ELF file " + esc(p) + ": " + esc(e.getMessage()));
    } catch (GoBinaryException e) {
      error(p, "cannot inspect " + esc(p) + ": " + esc(e.getMessage()));
    } catch (AccessDeniedException e) {
      error(p, "permission denied reading " + esc(p));
    } catch (IOException e) {
      error(p, "cannot read " + esc(p) + ": " + esc(e.getMessage()));
    } catch (RuntimeException e) {
      // a reader's bug on odd input: this file's verdict is unknown, the walk goes on
      error(p, "cannot inspect " + esc(p) + ": " + esc(e));
    }
  }

  /** Whether the file starts with the ELF magic (a regular file: the open cannot block). */
  private static boolean elf(Path p) throws IOException {
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
      ByteBuffer b = ByteBuffer.allocate(ELF_MAGIC.length);
      while (b.hasRemaining() && ch.read(b) >= 0) {
        // a short read of a regular file ends at its end
      }
      return !b.hasRemaining() && java.util.Arrays.equals(b.array(), ELF_MAGIC);
    }
  }

  private void error(Path p, String message) {
    errors++;
    err.println("gospan inspect: " + message);
    if (output == InspectCommand.Output.JSON) {
      out.println(InspectReport.of(p, InspectReport.Status.ERROR, message).json());
    }
  }

  private void summary(Path dir) {
    String line = "gospan inspect: " + esc(dir) + ": Go gRPC binaries: " + traceable + " traceable, " + unsupported
        + " unsupported; Go binaries without grpc-go: " + notGrpc + "; other ELF files: " + (notGo + otherArch) + " ("
        + otherArch + " for another architecture); other files: " + notElf + "; not opened: " + links
        + " symbolic links, " + special + " special files, " + otherFileSystems + " directories on other file systems;"
        + " unreadable: " + errors;
    (output == InspectCommand.Output.JSON ? err : out).println(line);
  }

  private static String esc(Object text) {
    return InspectReport.esc(text);
  }
}
