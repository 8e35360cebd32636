package main

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"gospan.dev/examples/greeter/greeterpb"
)

// relay serves the greeter API by calling an upstream greeter server twice
// per call: once in the handler's goroutine with the handler's ctx ("direct")
// and once in a goroutine the handler starts through errgroup, with the
// group's ctx, derived from the handler's ("spawned"). Both upstream calls
// are of the same kind as the call served and carry the same requests. The
// client gets the direct call's replies and status; a failure of either call
// fails the call served (errgroup's first error for the spawned one).
type relay struct {
	greeterpb.UnimplementedGreeterServer
	upstream greeterpb.GreeterClient
	logf     func(format string, args ...interface{})

	// upstreamCalls counts calls made to the upstream server (started);
	// sync/atomic functions, not atomic.Int64 (Go 1.19+): the relay builds
	// with Go back to 1.16.
	upstreamCalls int64
}

func newRelay(upstream greeterpb.GreeterClient) *relay {
	return &relay{upstream: upstream, logf: func(string, ...interface{}) {}}
}

// SayHello: two unary upstream calls.
func (r *relay) SayHello(ctx context.Context, req *greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		_, err := r.unary(gctx, req)
		return err
	})
	reply, err := r.unary(ctx, req)
	if werr := g.Wait(); err == nil {
		err = werr
	}
	r.logf("SayHello name=%q: %v", req.GetName(), code(err))
	if err != nil {
		return nil, err
	}
	return reply, nil
}

func (r *relay) unary(ctx context.Context, req *greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
	atomic.AddInt64(&r.upstreamCalls, 1)
	return r.upstream.SayHello(ctx, req)
}

// SayHelloServerStream: two upstream server-streaming calls; the direct
// call's replies are forwarded as they arrive.
func (r *relay) SayHelloServerStream(req *greeterpb.HelloRequest, stream greeterpb.Greeter_SayHelloServerStreamServer) error {
	ctx := stream.Context()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.serverStream(gctx, req, nil) })
	err := r.serverStream(ctx, req, stream.Send)
	if werr := g.Wait(); err == nil {
		err = werr
	}
	r.logf("SayHelloServerStream name=%q: %v", req.GetName(), code(err))
	return err
}

// serverStream makes one upstream server-streaming call and hands each reply
// to forward (nil: drop them).
func (r *relay) serverStream(ctx context.Context, req *greeterpb.HelloRequest, forward func(*greeterpb.HelloReply) error) error {
	atomic.AddInt64(&r.upstreamCalls, 1)
	up, err := r.upstream.SayHelloServerStream(ctx, req)
	if err != nil {
		return err
	}
	for {
		reply, err := up.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if forward != nil {
			if err := forward(reply); err != nil {
				return err
			}
		}
	}
}

// SayHelloClientStream: reads the client's requests, then makes two upstream
// client-streaming calls sending them all.
func (r *relay) SayHelloClientStream(stream greeterpb.Greeter_SayHelloClientStreamServer) error {
	var reqs []*greeterpb.HelloRequest
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		reqs = append(reqs, req)
	}
	if len(reqs) == 0 {
		return status.Error(codes.InvalidArgument, "no request received")
	}
	ctx := stream.Context()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		_, err := r.clientStream(gctx, reqs)
		return err
	})
	reply, err := r.clientStream(ctx, reqs)
	if werr := g.Wait(); err == nil {
		err = werr
	}
	r.logf("SayHelloClientStream name=%q: %v", reqs[0].GetName(), code(err))
	if err != nil {
		return err
	}
	return stream.SendAndClose(reply)
}

func (r *relay) clientStream(ctx context.Context, reqs []*greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
	atomic.AddInt64(&r.upstreamCalls, 1)
	up, err := r.upstream.SayHelloClientStream(ctx)
	if err != nil {
		return nil, err
	}
	for _, req := range reqs {
		if err := up.Send(req); err != nil {
			if err == io.EOF {
				break // the upstream ended the call; CloseAndRecv gives its status
			}
			return nil, err
		}
	}
	return up.CloseAndRecv()
}

// SayHelloBidi: two upstream bidi streams opened at the start. Each request
// from the client goes to both; the direct stream's reply is forwarded
// before the next request is read (the client's ping-pong), the spawned
// stream's replies are dropped.
func (r *relay) SayHelloBidi(stream greeterpb.Greeter_SayHelloBidiServer) error {
	ctx := stream.Context()
	g, gctx := errgroup.WithContext(ctx)
	toSpawned := make(chan *greeterpb.HelloRequest, 16)
	g.Go(func() error { return r.bidiSpawned(gctx, toSpawned) })
	err := r.bidiDirect(ctx, stream, toSpawned)
	close(toSpawned)
	if werr := g.Wait(); err == nil {
		err = werr
	}
	r.logf("SayHelloBidi: %v", code(err))
	return err
}

func (r *relay) bidiDirect(ctx context.Context, stream greeterpb.Greeter_SayHelloBidiServer, toSpawned chan<- *greeterpb.HelloRequest) error {
	atomic.AddInt64(&r.upstreamCalls, 1)
	up, err := r.upstream.SayHelloBidi(ctx)
	if err != nil {
		return err
	}
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		select {
		case toSpawned <- req:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
		if err := up.Send(req); err != nil && err != io.EOF {
			return err
		}
		reply, err := up.Recv()
		if err == io.EOF {
			return status.Error(codes.Internal, "upstream ended the stream without a reply")
		}
		if err != nil {
			return err
		}
		if err := stream.Send(reply); err != nil {
			return err
		}
	}
	if err := up.CloseSend(); err != nil {
		return err
	}
	// Wait for the upstream's status.
	for {
		if _, err := up.Recv(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func (r *relay) bidiSpawned(ctx context.Context, reqs <-chan *greeterpb.HelloRequest) error {
	atomic.AddInt64(&r.upstreamCalls, 1)
	up, err := r.upstream.SayHelloBidi(ctx)
	if err != nil {
		return err
	}
	recvErr := make(chan error, 1)
	go func() {
		for {
			if _, err := up.Recv(); err != nil {
				if err == io.EOF {
					err = nil
				}
				recvErr <- err
				return
			}
		}
	}()
	for req := range reqs {
		if err := up.Send(req); err != nil {
			if err == io.EOF {
				break // Recv gives the status
			}
			return err
		}
	}
	if err := up.CloseSend(); err != nil {
		return err
	}
	return <-recvErr
}

// BackgroundHeader is the request header every background call carries,
// with value "background", so that a tracer capturing it (gospan
// headers.allow) can tell the background calls from the relayed ones.
const BackgroundHeader = "relay-call"

// background calls the upstream every interval with context.Background()
// (a call made outside any served call; only BackgroundHeader is added to
// its outgoing metadata), cycling through the four kinds, until stop is
// closed. Without a deadline: a stopped upstream fails the call at once
// (UNAVAILABLE, not wait-for-ready).
func (r *relay) background(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	req := &greeterpb.HelloRequest{Name: "background"}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx := metadata.AppendToOutgoingContext(context.Background(), BackgroundHeader, "background")
		var err error
		switch i % 4 {
		case 0:
			_, err = r.unary(ctx, req)
		case 1:
			err = r.serverStream(ctx, req, nil)
		case 2:
			_, err = r.clientStream(ctx, []*greeterpb.HelloRequest{req})
		case 3:
			reqs := make(chan *greeterpb.HelloRequest, 1)
			reqs <- req
			close(reqs)
			err = r.bidiSpawned(ctx, reqs)
		}
		if err != nil {
			r.logf("background call %d: %v", i, code(err))
		}
	}
}

func code(err error) string {
	if err == nil {
		return "OK"
	}
	st, _ := status.FromError(err)
	return st.Code().String() + " " + st.Message()
}
