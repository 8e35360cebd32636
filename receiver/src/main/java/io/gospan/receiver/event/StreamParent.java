package io.gospan.receiver.event;

/**
 * The parent of a client stream inside its process: the server stream whose handler made the
 * call (in-process propagation, docs/propagation.md). Sent once per client stream that has one,
 * when the client stream is created ({@code (*http2Client).NewStream} returning it, in the
 * caller's goroutine); a client stream made outside any server call sends none.
 *
 * @param pid process id (in the namespace gospan runs in)
 * @param tid thread id
 * @param monotonicNs {@code bpf_ktime_get_ns()} when the client stream was created, ns
 * @param connectionId the client stream's connection, as {@link HeaderEvent#connectionId()}
 *     (the {@code net.Conn}'s data pointer); never 0
 * @param streamId the client stream's HTTP/2 stream id
 * @param parentConnectionId the server stream's connection (as the server's {@link HeaderEvent}s
 *     carry it)
 * @param parentStreamId the server stream's HTTP/2 stream id
 * @param via how the parent was found
 */
public record StreamParent(
    int pid,
    int tid,
    long monotonicNs,
    long connectionId,
    int streamId,
    long parentConnectionId,
    int parentStreamId,
    StreamParentVia via)
    implements ProbeEvent {}
