package io.gospan.receiver.discovery;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * For {@link ExecHoldIT}: an exec hold in a process of its own whose answering thread stalls on the first
 * exec of a binary under a directory. Prints {@code holding}, then, once the watchdog released what it held,
 * {@code released by the watchdog: N}; exits when its standard input closes.
 *
 * <p>{@code java ... ExecHoldStall DIR LIMIT_MS}
 */
public final class ExecHoldStall {
  private ExecHoldStall() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    try (ExecHold hold = ExecHold.start(new ExecHoldIT.DirJudge(dir, CompletableFuture::new),
        Duration.ofMillis(Long.parseLong(args[1])), Path.of("/proc/self/mountinfo"))) {
      hold.stallForTests = path -> path.startsWith(dir + "/");
      System.out.println("holding");
      System.out.flush();
      while (hold.holding()) {
        Thread.sleep(5);
      }
      System.out.println("released by the watchdog: " + hold.watchdogReleases());
      System.out.flush();
      while (System.in.read() >= 0) {
        // until the test closes our input
      }
    }
  }
}
