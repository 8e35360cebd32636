/**
 * Finding the Go gRPC processes beside gospan and following them, as stages on one discovery
 * thread ({@link io.gospan.receiver.discovery.Tracer}): {@link
 * io.gospan.receiver.discovery.ProcessWatcher} (a {@code /proc} scan at an interval, exec
 * notices), the matcher {@link io.gospan.receiver.discovery.ProcessSelector}, {@link
 * io.gospan.receiver.discovery.BinaryInspection} once per binary (device + inode; also {@code
 * gospan inspect}'s; kept by file identity in a {@link io.gospan.receiver.discovery.BinaryCache}),
 * and {@link io.gospan.receiver.discovery.ProbeAttacher}: probes attached once per binary and
 * detached when its last process has exited and its linger has passed.
 */
package io.gospan.receiver.discovery;
