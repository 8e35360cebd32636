package io.gospan.receiver.export;

import io.gospan.receiver.config.ConfigException;
import io.gospan.receiver.config.GospanConfig.OtlpSignalConfig;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The grpc-java (Netty) channel for OTLP/gRPC. gospan builds it itself because the SDK's
 * managed-channel sender, given only an endpoint, makes a bare {@code ManagedChannelBuilder}
 * channel that ignores the exporter's trusted certificates and client certificate; handing it a
 * configured channel ({@code setChannel}) is how TLS settings reach grpc-java.
 */
final class GrpcChannels {
  private GrpcChannels() {}

  static ManagedChannel create(OtlpSignalConfig o) {
    URI uri = URI.create(o.endpoint());
    boolean tls = "https".equals(uri.getScheme());
    int port = uri.getPort() != -1 ? uri.getPort() : (tls ? 443 : 80);
    NettyChannelBuilder b = NettyChannelBuilder.forAddress(uri.getHost(), port);
    if (!tls) {
      b.usePlaintext();
    } else {
      try {
        SslContextBuilder ssl = GrpcSslContexts.forClient();
        if (o.tls().caFile() != null) {
          ssl.trustManager(new ByteArrayInputStream(read("exporter.otlp.tls.ca_file", o.tls().caFile())));
        }
        if (o.tls().certFile() != null) {
          ssl.keyManager(
              new ByteArrayInputStream(read("exporter.otlp.tls.cert_file", o.tls().certFile())),
              new ByteArrayInputStream(read("exporter.otlp.tls.key_file", o.tls().keyFile())));
        }
        b.sslContext(ssl.build());
      } catch (IOException | IllegalArgumentException e) {
        throw new ConfigException("exporter.otlp.tls: cannot use the TLS files: " + e.getMessage(), e);
      }
    }
    return b.build();
  }

  static void shutdown(ManagedChannel channel) {
    channel.shutdown();
    try {
      if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
        channel.shutdownNow();
      }
    } catch (InterruptedException e) {
      channel.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  private static byte[] read(String key, String file) {
    try {
      return Files.readAllBytes(Path.of(file));
    } catch (IOException e) {
      throw new ConfigException(key + ": cannot read '" + file + "': " + e.getMessage(), e);
    }
  }
}
