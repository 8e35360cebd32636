// Command greeter-server serves the greeter service (greeter/greeter.proto)
// for gospan's tests, demos and benchmarks.
//
// Once it accepts connections it prints exactly one line to stdout,
// "listening on HOST:PORT", so that a caller that asked for port 0 can read
// the real port. Everything else goes to stderr. SIGINT or SIGTERM stops it
// gracefully (in-flight calls get a few seconds), exit status 0.
//
// With -http-handler the gRPC server is not run by grpc-go's own HTTP/2
// transport but behind net/http, through (*grpc.Server).ServeHTTP: over h2c
// (cleartext HTTP/2 from golang.org/x/net/http2) or, with -tls, over
// net/http's bundled HTTP/2. Response headers then take a different code path
// (hpack Encoder.WriteField instead of grpc-go's loopyWriter). With
// -http-status N as well, every request is answered with HTTP status N and no
// gRPC status at all, as a proxy or a non-gRPC server in the way would (the
// client maps it to a gRPC code: 503 is UNAVAILABLE).
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"gospan.dev/examples/greeter"
	"gospan.dev/examples/greeter/greeterpb"
)

// shutdownGrace is how long in-flight calls may run after SIGINT/SIGTERM.
const shutdownGrace = 5 * time.Second

type config struct {
	addr        string
	useTLS      bool
	certFile    string
	keyFile     string
	httpHandler bool
	httpStatus  int
	verbose     bool
	listenAfter time.Duration
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("greeter-server: ")

	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:50051", "`host:port` to listen on; port 0 picks a free port")
	flag.BoolVar(&cfg.useTLS, "tls", false, "serve TLS (needs -tls-cert and -tls-key)")
	flag.StringVar(&cfg.certFile, "tls-cert", "", "PEM server certificate `file` for -tls")
	flag.StringVar(&cfg.keyFile, "tls-key", "", "PEM server private key `file` for -tls")
	flag.BoolVar(&cfg.httpHandler, "http-handler", false,
		"serve gRPC through net/http (grpc.Server.ServeHTTP): h2c without -tls, net/http's HTTP/2 with -tls")
	flag.IntVar(&cfg.httpStatus, "http-status", 0,
		"with -http-handler: answer every request with this HTTP status and no gRPC status (e.g. 503); 0 = serve gRPC")
	flag.BoolVar(&cfg.verbose, "v", false, "log every call to stderr")
	flag.DurationVar(&cfg.listenAfter, "listen-after", 0,
		"wait this long after starting before listening, as a server that starts slowly does")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: greeter-server [flags]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}

	if cfg.httpStatus != 0 && (!cfg.httpHandler || cfg.httpStatus < 100 || cfg.httpStatus > 999) {
		fmt.Fprintln(os.Stderr, "greeter-server: -http-status needs -http-handler and a status 100-999")
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		log.Fatal(err)
	}
}

func run(cfg config) error {
	var tlsConfig *tls.Config
	if cfg.useTLS {
		if cfg.certFile == "" || cfg.keyFile == "" {
			return errors.New("-tls needs -tls-cert and -tls-key")
		}
		cert, err := tls.LoadX509KeyPair(cfg.certFile, cfg.keyFile)
		if err != nil {
			return fmt.Errorf("loading TLS key pair: %v", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	}

	impl := greeter.NewServer()
	if cfg.verbose {
		impl.Logf = log.Printf
	}
	var opts []grpc.ServerOption
	if tlsConfig != nil && !cfg.httpHandler {
		// In -http-handler mode net/http terminates TLS, not grpc-go.
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConfig)))
	}
	grpcServer := grpc.NewServer(opts...)
	greeterpb.RegisterGreeterServer(grpcServer, impl)
	healthpb.RegisterHealthServer(grpcServer, health.NewServer())

	time.Sleep(cfg.listenAfter)
	lis, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	mode := "grpc transport"
	var serve func() error
	var shutdown func()
	if cfg.httpHandler {
		mode = "net/http handler, h2c"
		var handler http.Handler = grpcServer
		if cfg.httpStatus != 0 {
			mode += ", every request answered HTTP " + fmt.Sprint(cfg.httpStatus)
			handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(cfg.httpStatus)
			})
		}
		httpServer := &http.Server{
			Handler:  h2c.NewHandler(handler, &http2.Server{}),
			ErrorLog: log.New(os.Stderr, "greeter-server: http: ", log.LstdFlags),
		}
		serve = func() error { return httpServer.Serve(lis) }
		if tlsConfig != nil {
			mode = "net/http handler, TLS"
			httpServer.Handler = handler
			// ServeTLS adds "h2" to NextProtos and serves net/http's bundled HTTP/2.
			httpServer.TLSConfig = tlsConfig
			serve = func() error { return httpServer.ServeTLS(lis, "", "") }
		}
		shutdown = func() {
			sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			defer cancel()
			if err := httpServer.Shutdown(sctx); err != nil {
				httpServer.Close()
			}
			grpcServer.Stop()
		}
	} else {
		serve = func() error { return grpcServer.Serve(lis) }
		shutdown = func() { gracefulStop(grpcServer) }
	}
	if tlsConfig != nil && !cfg.httpHandler {
		mode += ", TLS"
	}

	errc := make(chan error, 1)
	go func() { errc <- serve() }()

	// The one line on stdout. fmt writes to os.Stdout unbuffered.
	fmt.Printf("listening on %s\n", lis.Addr().String())
	log.Printf("serving greeter (%s), pid %d", mode, os.Getpid())

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %v", err)
	case <-ctx.Done():
	}
	stop() // a second signal now kills the process the default way
	log.Printf("signal received, shutting down")
	shutdown()
	if err := <-errc; err != nil && err != grpc.ErrServerStopped && err != http.ErrServerClosed {
		return fmt.Errorf("serve: %v", err)
	}
	log.Printf("stopped")
	return nil
}

// gracefulStop lets in-flight calls finish for up to shutdownGrace, then
// closes everything.
func gracefulStop(s *grpc.Server) {
	done := make(chan struct{})
	go func() {
		s.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(shutdownGrace):
		s.Stop()
		<-done
	}
}
