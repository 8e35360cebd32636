/** The {@code gospan} command line: {@code run} (the sidecar), {@code inspect}, {@code version}. */
package io.gospan.receiver.cli;
