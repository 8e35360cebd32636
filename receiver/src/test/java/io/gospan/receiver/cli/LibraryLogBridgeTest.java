package io.gospan.receiver.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class LibraryLogBridgeTest {

  @Test
  void aNetworkFailureIsExpectedABugIsNot() {
    Throwable refused = new CompletionException(new UncheckedIOException(new ConnectException("Connection refused")));
    assertThat(LibraryLogBridge.isExpected(refused)).isTrue();
    assertThat(LibraryLogBridge.isExpected(new IllegalStateException(new NullPointerException()))).isFalse();
  }

  @Test
  void theChainIsOneLineWithoutRepeats() {
    ConnectException root = new ConnectException();
    Throwable t = new CompletionException(new UncheckedIOException(new ConnectException("refused\nby peer")));
    t.getCause().getCause().initCause(root);
    assertThat(LibraryLogBridge.chain(t))
        .isEqualTo("java.util.concurrent.CompletionException caused by java.io.UncheckedIOException"
            + " caused by java.net.ConnectException: refused by peer caused by java.net.ConnectException")
        .doesNotContain("\n");
  }

  @Test
  void oneLinePerKindAndWindowThenTheCountOfWhatWasLeftOut() {
    LibraryLogBridge b = new LibraryLogBridge(1_000);
    assertThat(b.admit("a", 0)).isZero();
    assertThat(b.admit("a", 10)).isEqualTo(-1);
    assertThat(b.admit("b", 20)).isZero();
    assertThat(b.admit("a", 999)).isEqualTo(-1);
    assertThat(b.admit("a", 1_000)).isEqualTo(2);
    assertThat(b.admit("a", 1_500)).isEqualTo(-1);
  }
}
