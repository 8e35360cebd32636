// Command greeter-relay is a middle tier for gospan's in-process propagation
// tests: it serves the greeter service (greeter/greeter.proto) and answers
// every call, of every kind, by calling an upstream greeter server twice:
//
//   - direct: in the handler's goroutine, with the handler's context;
//   - spawned: in a goroutine the handler starts (golang.org/x/sync/errgroup),
//     with the group's context, derived from the handler's.
//
// Both upstream calls are children of the call served. Besides, a background
// loop calls the upstream every -background interval with
// context.Background(): calls that are children of nothing (-background 0
// turns it off).
//
// Once it accepts connections it prints exactly one line to stdout,
// "listening on HOST:PORT". Everything else goes to stderr. SIGINT or SIGTERM
// stops it gracefully, exit status 0.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"gospan.dev/examples/greeter/greeterpb"
)

// shutdownGrace is how long in-flight calls may run after SIGINT/SIGTERM.
const shutdownGrace = 5 * time.Second

type config struct {
	addr       string
	upstream   string
	useTLS     bool
	certFile   string
	keyFile    string
	upTLS      bool
	caFile     string
	serverName string
	background time.Duration
	verbose    bool
}

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	log.SetPrefix("greeter-relay: ")

	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:50052", "`host:port` to listen on; port 0 picks a free port")
	flag.StringVar(&cfg.upstream, "upstream", "127.0.0.1:50051", "`host:port` of the greeter server to call")
	flag.BoolVar(&cfg.useTLS, "tls", false, "serve TLS (needs -tls-cert and -tls-key)")
	flag.StringVar(&cfg.certFile, "tls-cert", "", "PEM server certificate `file` for -tls")
	flag.StringVar(&cfg.keyFile, "tls-key", "", "PEM server private key `file` for -tls")
	flag.BoolVar(&cfg.upTLS, "upstream-tls", false, "call the upstream over TLS")
	flag.StringVar(&cfg.caFile, "ca", "", "PEM CA `file` to verify the upstream with (default: system roots)")
	flag.StringVar(&cfg.serverName, "server-name", "", "`name` to verify the upstream's certificate for (default: host of -upstream)")
	flag.DurationVar(&cfg.background, "background", time.Second, "interval of the background calls made with context.Background(); 0 = none")
	flag.BoolVar(&cfg.verbose, "v", false, "log every call to stderr")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: greeter-relay [flags]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 || cfg.background < 0 {
		flag.Usage()
		os.Exit(2)
	}

	if err := run(cfg); err != nil {
		log.Fatal(err)
	}
}

func run(cfg config) error {
	var serverOpts []grpc.ServerOption
	if cfg.useTLS {
		if cfg.certFile == "" || cfg.keyFile == "" {
			return errors.New("-tls needs -tls-cert and -tls-key")
		}
		cert, err := tls.LoadX509KeyPair(cfg.certFile, cfg.keyFile)
		if err != nil {
			return fmt.Errorf("loading TLS key pair: %v", err)
		}
		serverOpts = append(serverOpts, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
	}
	creds, err := upstreamCredentials(cfg)
	if err != nil {
		return err
	}
	// Connects lazily; a call made while the upstream is down fails with
	// UNAVAILABLE. (grpc.Dial without WithBlock, not grpc.NewClient: the
	// relay builds with grpc-go back to v1.40, NewClient is v1.63+.)
	conn, err := grpc.Dial(cfg.upstream, grpc.WithTransportCredentials(creds))
	if err != nil {
		return fmt.Errorf("upstream %s: %v", cfg.upstream, err)
	}
	defer conn.Close()

	r := newRelay(greeterpb.NewGreeterClient(conn))
	if cfg.verbose {
		r.logf = log.Printf
	}
	grpcServer := grpc.NewServer(serverOpts...)
	greeterpb.RegisterGreeterServer(grpcServer, r)
	healthpb.RegisterHealthServer(grpcServer, health.NewServer())

	lis, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	errc := make(chan error, 1)
	go func() { errc <- grpcServer.Serve(lis) }()
	stopBackground := make(chan struct{})
	backgroundDone := make(chan struct{})
	go func() {
		defer close(backgroundDone)
		if cfg.background > 0 {
			r.background(cfg.background, stopBackground)
		}
	}()

	fmt.Printf("listening on %s\n", lis.Addr().String())
	log.Printf("relaying greeter to %s (background every %v), pid %d", cfg.upstream, cfg.background, os.Getpid())

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %v", err)
	case <-ctx.Done():
	}
	stop() // a second signal now kills the process the default way
	log.Printf("signal received, shutting down")
	close(stopBackground)
	<-backgroundDone
	gracefulStop(grpcServer)
	if err := <-errc; err != nil && err != grpc.ErrServerStopped {
		return fmt.Errorf("serve: %v", err)
	}
	log.Printf("stopped after %d upstream calls", atomic.LoadInt64(&r.upstreamCalls))
	return nil
}

func upstreamCredentials(cfg config) (credentials.TransportCredentials, error) {
	if !cfg.upTLS {
		return insecure.NewCredentials(), nil
	}
	tc := &tls.Config{ServerName: cfg.serverName}
	if cfg.caFile != "" {
		pem, err := os.ReadFile(cfg.caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate found", cfg.caFile)
		}
		tc.RootCAs = pool
	}
	return credentials.NewTLS(tc), nil
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
