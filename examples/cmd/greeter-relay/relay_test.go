package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"gospan.dev/examples/greeter"
	"gospan.dev/examples/greeter/greeterpb"
)

// counter counts the calls a server received, by full method name, and
// those carrying BackgroundHeader.
type counter struct {
	mu         sync.Mutex
	n          map[string]int
	background int
}

func (c *counter) add(ctx context.Context, method string) {
	md, _ := metadata.FromIncomingContext(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[method]++
	if v := md.Get(BackgroundHeader); len(v) == 1 && v[0] == "background" {
		c.background++
	}
}

func (c *counter) backgroundCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.background
}

func (c *counter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// serve starts a gRPC server for impl on a loopback port; returns a client
// connection to it.
func serve(t *testing.T, impl greeterpb.GreeterServer, opts ...grpc.ServerOption) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(opts...)
	greeterpb.RegisterGreeterServer(s, impl)
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	conn, err := grpc.Dial(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// upstream starts the real greeter server, counting the calls it receives.
func upstream(t *testing.T) (*grpc.ClientConn, *counter) {
	c := &counter{n: map[string]int{}}
	conn := serve(t, greeter.NewServer(),
		grpc.UnaryInterceptor(func(ctx context.Context, req interface{}, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (interface{}, error) {
			c.add(ctx, info.FullMethod)
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv interface{}, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			c.add(ss.Context(), info.FullMethod)
			return h(srv, ss)
		}))
	return conn, c
}

const (
	mUnary  = "/greeter.Greeter/SayHello"
	mServer = "/greeter.Greeter/SayHelloServerStream"
	mClient = "/greeter.Greeter/SayHelloClientStream"
	mBidi   = "/greeter.Greeter/SayHelloBidi"
)

// callKind makes one call of a kind through client and checks the replies.
func callKind(ctx context.Context, client greeterpb.GreeterClient, method string, req *greeterpb.HelloRequest) error {
	switch method {
	case mUnary:
		reply, err := client.SayHello(ctx, req)
		if err != nil {
			return err
		}
		if reply.GetMessage() != "Hello "+req.GetName() {
			return fmt.Errorf("unary reply %q", reply.GetMessage())
		}
	case mServer:
		stream, err := client.SayHelloServerStream(ctx, req)
		if err != nil {
			return err
		}
		n := int32(0)
		for {
			reply, err := stream.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if reply.GetIndex() != n {
				return fmt.Errorf("server-stream reply %d has index %d", n, reply.GetIndex())
			}
			n++
		}
		if n != req.GetReplyCount() {
			return fmt.Errorf("server-stream: %d replies, want %d", n, req.GetReplyCount())
		}
	case mClient:
		stream, err := client.SayHelloClientStream(ctx)
		if err != nil {
			return err
		}
		for _, name := range []string{"a", "b", "c"} {
			r := proto.Clone(req).(*greeterpb.HelloRequest)
			r.Name = name
			if err := stream.Send(r); err != nil && err != io.EOF {
				return err
			}
		}
		reply, err := stream.CloseAndRecv()
		if err != nil {
			return err
		}
		if reply.GetMessage() != "Hello a, b, c" {
			return fmt.Errorf("client-stream reply %q", reply.GetMessage())
		}
	case mBidi:
		stream, err := client.SayHelloBidi(ctx)
		if err != nil {
			return err
		}
		for i := int32(0); i < 3; i++ {
			r := proto.Clone(req).(*greeterpb.HelloRequest)
			r.Name = fmt.Sprint("n", i)
			if err := stream.Send(r); err != nil && err != io.EOF {
				return err
			}
			reply, err := stream.Recv()
			if err != nil {
				return err
			}
			if reply.GetMessage() != "Hello "+r.Name || reply.GetIndex() != i {
				return fmt.Errorf("bidi reply %d: %q index %d", i, reply.GetMessage(), reply.GetIndex())
			}
		}
		if err := stream.CloseSend(); err != nil {
			return err
		}
		if _, err := stream.Recv(); err != io.EOF {
			return fmt.Errorf("bidi end: %v", err)
		}
	}
	return nil
}

var kinds = []string{mUnary, mServer, mClient, mBidi}

// Every kind is answered through the relay, and each call served makes
// exactly two upstream calls of the same kind (counted by the server).
func TestRelayCallsUpstreamTwicePerCall(t *testing.T) {
	upConn, count := upstream(t)
	r := newRelay(greeterpb.NewGreeterClient(upConn))
	client := greeterpb.NewGreeterClient(serve(t, r))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	const perKind = 5
	for _, m := range kinds {
		for i := 0; i < perKind; i++ {
			if err := callKind(ctx, client, m, &greeterpb.HelloRequest{Name: "relay", ReplyCount: 3}); err != nil {
				t.Fatalf("%s call %d through the relay: %v", m, i, err)
			}
		}
	}
	got := count.snapshot()
	for _, m := range kinds {
		if got[m] != 2*perKind {
			t.Errorf("%s: the server got %d calls for %d relayed, want %d", m, got[m], perKind, 2*perKind)
		}
	}
	if len(got) != len(kinds) {
		t.Errorf("the server got calls of other methods: %v", got)
	}
	if n := count.backgroundCalls(); n != 0 {
		t.Errorf("%d relayed calls carried the %s header of background calls", n, BackgroundHeader)
	}
	if n := atomic.LoadInt64(&r.upstreamCalls); n != int64(2*perKind*len(kinds)) {
		t.Errorf("the relay counted %d upstream calls, want %d", n, 2*perKind*len(kinds))
	}
}

// An upstream failure reaches the client with its code, after both upstream
// calls were made.
func TestRelayPassesUpstreamStatus(t *testing.T) {
	upConn, count := upstream(t)
	client := greeterpb.NewGreeterClient(serve(t, newRelay(greeterpb.NewGreeterClient(upConn))))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, m := range kinds {
		err := callKind(ctx, client, m, &greeterpb.HelloRequest{Name: "x", FailCode: int32(codes.NotFound), ReplyCount: 3})
		if status.Code(err) != codes.NotFound {
			t.Errorf("%s: got %v, want NOT_FOUND", m, err)
		}
	}
	got := count.snapshot()
	for _, m := range kinds {
		if got[m] != 2 {
			t.Errorf("%s: the server got %d calls, want 2", m, got[m])
		}
	}
}

// The background loop calls the upstream by itself, every kind in turn.
func TestRelayBackgroundCalls(t *testing.T) {
	upConn, count := upstream(t)
	r := newRelay(greeterpb.NewGreeterClient(upConn))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.background(5*time.Millisecond, stop)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := count.snapshot()
		all := true
		for _, m := range kinds {
			all = all && got[m] >= 2
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("background calls seen by the server after 10 s: %v", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	<-done
	after := count.snapshot()
	total := 0
	for _, n := range after {
		total += n
	}
	if bg := count.backgroundCalls(); bg != total {
		t.Errorf("%d of %d background calls carried %s: background", bg, total, BackgroundHeader)
	}
	time.Sleep(50 * time.Millisecond)
	if again := count.snapshot(); fmt.Sprint(again) != fmt.Sprint(after) {
		t.Errorf("background calls went on after stop: %v then %v", after, again)
	}
}
