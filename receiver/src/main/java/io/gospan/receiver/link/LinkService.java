package io.gospan.receiver.link;

import io.gospan.receiver.span.SpanAssembler;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.opentelemetry.api.metrics.Meter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Linking across gospans, both halves: the link server on {@link LinkSettings#listen()} answering
 * other gospans from span assembly, and the {@link LinkClient} span assembly asks through ({@link
 * SpanAssembler#remoteLinks}). One thread ({@code gospan-link}) sends the queued questions every
 * {@link LinkSettings#batchInterval()} and re-checks the questions waiting here every {@value
 * #SERVER_TICK_MILLIS} ms, both only while questions wait (an idle gospan is not woken), closes
 * idle peers every minute and re-reads this gospan's own addresses every {@value
 * #ADDRESSES_REFRESH_SECONDS} s; grpc-java's Netty threads carry the streams.
 *
 * <pre>{@code
 * LinkService link = LinkService.start(settings, pipeline.assembler(), pipeline.meter());
 * ...
 * link.close();
 * }</pre>
 *
 * <p>An address that cannot be listened on (in use, not this host's) is one ERROR line: gospan
 * traces on and asks its peers, but no other gospan can link its server spans to this one's
 * client spans ({@link #serving()} is false).
 */
public final class LinkService implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LinkService.class);
  static final long SERVER_TICK_MILLIS = 10;
  static final long ADDRESSES_REFRESH_SECONDS = 10;
  /** Connecting to a peer fails after this long (a peer that drops packets). */
  static final int CONNECT_TIMEOUT_MILLIS = 1000;

  private final SpanAssembler assembler;
  private final LinkClient client;
  private final LinkServer linkServer;
  private final Server server; // null: not serving
  private final EventLoopGroup serverLoop; // the server's own: a failed start releases nothing shared
  private final ScheduledExecutorService scheduler;

  private LinkService(SpanAssembler assembler, LinkClient client, LinkServer linkServer, Server server,
      EventLoopGroup serverLoop, ScheduledExecutorService scheduler) {
    this.assembler = assembler;
    this.client = client;
    this.linkServer = linkServer;
    this.server = server;
    this.serverLoop = serverLoop;
    this.scheduler = scheduler;
  }

  /**
   * Starts serving and asking, and hands the client to {@code assembler}.
   *
   * @throws IllegalArgumentException the TLS files cannot be used (message names the problem)
   */
  public static LinkService start(LinkSettings s, SpanAssembler assembler, Meter meter) {
    OwnAddresses own = new OwnAddresses();
    return start(s, assembler, meter, own, peer -> new InetSocketAddress(peer, s.peerPort()));
  }

  /**
   * As {@link #start(LinkSettings, SpanAssembler, Meter)}, with the own addresses and where each
   * peer's link service is given (tests: peers at made-up addresses served on 127.0.0.1).
   */
  static LinkService start(LinkSettings s, SpanAssembler assembler, Meter meter, OwnAddresses own,
      Function<java.net.InetAddress, InetSocketAddress> peerAddress) {
    ChannelCredentials channelCredentials = channelCredentials(s);
    ServerCredentials serverCredentials = serverCredentials(s);
    Function<InetSocketAddress, ManagedChannel> channels = peer -> {
      NettyChannelBuilder b = NettyChannelBuilder.forAddress(peer, channelCredentials)
          .withOption(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS)
          .directExecutor()
          .maxInboundMessageSize(4 << 20);
      if (s.tls() != null) {
        b.overrideAuthority(s.tls().serverName());
      }
      return b.build();
    };
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "gospan-link");
      t.setDaemon(true);
      return t;
    });
    long batch = Math.max(1, s.batchInterval().toMillis());
    Ticker clientTicks = new Ticker(scheduler, batch);
    Ticker serverTicks = new Ticker(scheduler, SERVER_TICK_MILLIS);
    LinkClient client = new LinkClient(s, assembler, own, meter, channels, peerAddress, clientTicks::wake);
    LinkServer linkServer = new LinkServer(s, assembler, meter, LinkService::epochNanos, serverTicks::wake);
    clientTicks.task = client::tick;
    serverTicks.task = linkServer::tick;
    EventLoopGroup serverLoop = new NioEventLoopGroup(1, r -> {
      Thread t = new Thread(r, "gospan-link-server");
      t.setDaemon(true);
      return t;
    });
    Server server = NettyServerBuilder.forAddress(s.listen(), serverCredentials)
        .bossEventLoopGroup(serverLoop)
        .workerEventLoopGroup(serverLoop)
        .channelType(NioServerSocketChannel.class)
        .addService(linkServer)
        .directExecutor()
        .maxInboundMessageSize(4 << 20)
        .build();
    try {
      server.start();
      log.info("link service on {}:{} ({}); asking other gospans at port {}", s.listen().getHostString(),
          server.getPort(), s.tls() != null ? "mutual TLS" : "plaintext", s.peerPort());
    } catch (IOException | RuntimeException e) {
      log.error("link.listen {}:{}: cannot listen ({}); other gospans cannot link their server spans to this one's"
              + " client spans; this one still asks them", s.listen().getHostString(), s.listen().getPort(),
          e.getCause() != null ? e.getCause().getMessage() : e.getMessage());
      server.shutdownNow();
      server = null;
      serverLoop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }
    scheduler.scheduleWithFixedDelay(guard(client::tick), 60, 60, TimeUnit.SECONDS); // idle peers
    scheduler.scheduleWithFixedDelay(guard(own::refresh), ADDRESSES_REFRESH_SECONDS, ADDRESSES_REFRESH_SECONDS, TimeUnit.SECONDS);
    assembler.remoteLinks(client);
    return new LinkService(assembler, client, linkServer, server, serverLoop, scheduler);
  }

  /** Runs {@code task} {@code delayMillis} after a {@link #wake}, again while it says work is left. */
  private static final class Ticker {
    private final ScheduledExecutorService scheduler;
    private final long delayMillis;
    private final java.util.concurrent.atomic.AtomicBoolean scheduled = new java.util.concurrent.atomic.AtomicBoolean();
    volatile java.util.function.BooleanSupplier task;

    Ticker(ScheduledExecutorService scheduler, long delayMillis) {
      this.scheduler = scheduler;
      this.delayMillis = delayMillis;
    }

    void wake() {
      if (scheduled.compareAndSet(false, true)) {
        try {
          scheduler.schedule(this::run, delayMillis, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
          // shut down
        }
      }
    }

    private void run() {
      scheduled.set(false); // before the work: a wake during it schedules the next run
      boolean more = true; // after a failure too: the questions still wait
      try {
        more = task.getAsBoolean();
      } catch (RuntimeException e) {
        log.warn("link service: {}", e.toString(), e);
      }
      if (more) {
        wake();
      }
    }
  }

  private static Runnable guard(Runnable r) {
    return () -> {
      try {
        r.run();
      } catch (RuntimeException e) {
        log.warn("link service: {}", e.toString(), e);
      }
    };
  }

  static long epochNanos() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  private static ChannelCredentials channelCredentials(LinkSettings s) {
    if (s.tls() == null) {
      return InsecureChannelCredentials.create();
    }
    try {
      return TlsChannelCredentials.newBuilder()
          .keyManager(s.tls().certFile().toFile(), s.tls().keyFile().toFile())
          .trustManager(s.tls().caFile().toFile())
          .build();
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("cannot use the TLS files: " + e.getMessage(), e);
    }
  }

  private static ServerCredentials serverCredentials(LinkSettings s) {
    if (s.tls() == null) {
      return InsecureServerCredentials.create();
    }
    try {
      return TlsServerCredentials.newBuilder()
          .keyManager(s.tls().certFile().toFile(), s.tls().keyFile().toFile())
          .trustManager(s.tls().caFile().toFile())
          .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE)
          .build();
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("cannot use the TLS files: " + e.getMessage(), e);
    }
  }

  /** Whether other gospans can ask this one (the server listens). */
  public boolean serving() {
    return server != null;
  }

  /** Where the link service listens (the port picked when 0 was configured), or {@code null} when not serving. */
  public InetSocketAddress address() {
    return server == null ? null : (InetSocketAddress) server.getListenSockets().get(0);
  }

  /** The asking half (span assembly's {@code RemoteLinks}). */
  public LinkClient client() {
    return client;
  }

  /** Questions from other gospans waiting here for an answer. */
  public int questionsWaiting() {
    return linkServer.pending();
  }

  /** Stops asking (span assembly asks no one any more) and serving. */
  @Override
  public void close() {
    assembler.remoteLinks(null);
    scheduler.shutdownNow();
    client.close();
    if (server != null) {
      linkServer.closeAll();
      server.shutdownNow();
      try {
        server.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      serverLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }
}
