/**
 * Linking across gospans: the link service (gRPC, {@code src/main/proto/gospan/link/v1/link.proto})
 * through which the gospan that traced a call's server end learns the client span another gospan
 * traced for it (one gospan per pod or host).
 *
 * <ul>
 *   <li>{@link io.gospan.receiver.link.LinkService} — starts both halves from {@link
 *       io.gospan.receiver.link.LinkSettings}: the server on {@code link.listen} and the client.
 *   <li>{@link io.gospan.receiver.link.LinkServer} — answers other gospans' queries from {@code
 *       SpanAssembler.clientSpan}.
 *   <li>{@link io.gospan.receiver.link.LinkClient} — span assembly's {@code RemoteLinks}: asks the
 *       gospan at a server span's client address, batched per peer, backs off peers that do not
 *       answer, validates answers, hands them to {@code SpanAssembler.remoteParent}.
 *   <li>{@link io.gospan.receiver.link.OwnAddresses} — this gospan's own addresses (its network
 *       namespace's), where no other gospan is asked.
 *   <li>{@link io.gospan.receiver.link.LinkMetrics} — the self-telemetry instruments.
 * </ul>
 *
 * <p>Depends on {@code io.gospan.receiver.span} (the assembler, {@code RemoteLinks}, {@code
 * ClientFlow}) and grpc-java, protobuf, the OpenTelemetry API; docs/architecture.md, "Package
 * graph", and "Linking across gospans".
 */
package io.gospan.receiver.link;
