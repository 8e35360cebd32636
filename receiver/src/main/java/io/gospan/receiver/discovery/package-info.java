/**
 * Finding the Go gRPC processes beside gospan and following them: a {@code /proc} scan at an
 * interval, selection, inspection once per binary (device + inode), probes attached once per
 * binary and detached when its last process exits.
 */
package io.gospan.receiver.discovery;
