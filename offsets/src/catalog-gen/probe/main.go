// probe is the offsets catalog's generator program: a gRPC health server and client in one binary, over
// plain TCP and TLS, so the linker keeps every function and type the gospan probes read (loopyWriter,
// http2Client, http2Server, x/net http2 frames and hpack, net.TCPConn, crypto/tls.Conn, grpc's
// credentials.syscallConn), and the ServeHTTP path: grpc-go's server behind x/net's h2c and behind
// net/http's own HTTP/2 (TLS), so both HTTP/2 server copies (x/net http2 serverConn, net/http's
// bundled http2serverConn) and their hpack encoders are linked too. It uses only APIs present in
// every grpc-go release from v1.30 on (grpc.WithInsecure rather than credentials/insecure, which
// came in v1.34) and in the x/net those releases ask for (h2c since 2018). It is built, never run.
package main

import (
	"context"
	"crypto/tls"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	if len(os.Args) > 1 && os.Args[1] == "-h2c" {
		// the ServeHTTP path over x/net's h2c
		go (&http.Server{Handler: h2c.NewHandler(srv, &http2.Server{})}).Serve(lis)
	} else if len(os.Args) > 1 && os.Args[1] == "-https" {
		// the ServeHTTP path over net/http's own HTTP/2 (TLS)
		go (&http.Server{Handler: srv}).ServeTLS(lis, "cert.pem", "key.pem")
	} else {
		go srv.Serve(lis)
	}
	defer srv.Stop()

	opt := grpc.WithInsecure()
	if len(os.Args) > 1 && os.Args[1] == "-tls" {
		opt = grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}))
	}
	conn, err := grpc.Dial(lis.Addr().String(), opt)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("health: %v", resp.GetStatus())
}
