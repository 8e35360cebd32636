/**
 * The {@code gospan} command line: {@code run} (the sidecar), {@code inspect} (one binary, or every Go binary under a
 * directory: {@link io.gospan.receiver.cli.InspectDirectory}; as text or JSON: {@link io.gospan.receiver.cli.InspectReport}),
 * {@code version}.
 */
package io.gospan.receiver.cli;
