package greeter

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"gospan.dev/examples/greeter/greeterpb"
)

// startServer serves a Server on a loopback port and returns a client.
func startServer(t *testing.T) greeterpb.GreeterClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	greeterpb.RegisterGreeterServer(s, NewServer())
	go s.Serve(lis)
	t.Cleanup(s.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := grpc.DialContext(ctx, lis.Addr().String(), grpc.WithInsecure(), grpc.WithBlock())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return greeterpb.NewGreeterClient(conn)
}

func wantStatus(t *testing.T, err error, code codes.Code) {
	t.Helper()
	st, _ := status.FromError(err)
	if st.Code() != code {
		t.Fatalf("status %v (%v), want %v", st.Code(), err, code)
	}
	if code != codes.OK && code != codes.DeadlineExceeded && st.Message() != FailureMessage(code) {
		t.Fatalf("status message %q, want %q", st.Message(), FailureMessage(code))
	}
}

func TestUnary(t *testing.T) {
	c := startServer(t)
	ctx := context.Background()

	reply, err := c.SayHello(ctx, &greeterpb.HelloRequest{Name: "a"})
	wantStatus(t, err, codes.OK)
	if reply.GetMessage() != "Hello a" {
		t.Errorf("reply %q", reply.GetMessage())
	}

	_, err = c.SayHello(ctx, &greeterpb.HelloRequest{Name: "a", FailCode: int32(codes.NotFound)})
	wantStatus(t, err, codes.NotFound)
}

func TestUnaryDeadline(t *testing.T) {
	c := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.SayHello(ctx, &greeterpb.HelloRequest{DelayMs: 5000})
	wantStatus(t, err, codes.DeadlineExceeded)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v; the delay should end with the deadline", d)
	}
}

// recvAll reads a server stream to its end: the messages and the status.
func recvAll(recv func() (*greeterpb.HelloReply, error)) ([]*greeterpb.HelloReply, error) {
	var got []*greeterpb.HelloReply
	for {
		r, err := recv()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, r)
	}
}

func TestServerStream(t *testing.T) {
	c := startServer(t)
	cases := []struct {
		name     string
		req      *greeterpb.HelloRequest
		wantMsgs int
		wantCode codes.Code
	}{
		{"ok", &greeterpb.HelloRequest{ReplyCount: 4}, 4, codes.OK},
		{"reply_count 0 means 1", &greeterpb.HelloRequest{}, 1, codes.OK},
		{"trailers-only", &greeterpb.HelloRequest{ReplyCount: 4, FailCode: int32(codes.Internal)}, 0, codes.Internal},
		{"fail after 2", &greeterpb.HelloRequest{ReplyCount: 4, FailCode: int32(codes.Unavailable), FailAfterMessages: 2}, 2, codes.Unavailable},
		{"fail after all", &greeterpb.HelloRequest{ReplyCount: 2, FailCode: int32(codes.Aborted), FailAfterMessages: 9}, 2, codes.Aborted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stream, err := c.SayHelloServerStream(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := recvAll(stream.Recv)
			wantStatus(t, err, tc.wantCode)
			if len(got) != tc.wantMsgs {
				t.Fatalf("%d messages, want %d", len(got), tc.wantMsgs)
			}
			for i, r := range got {
				if r.GetIndex() != int32(i) {
					t.Errorf("message %d has index %d", i, r.GetIndex())
				}
			}
		})
	}
}

func TestClientStream(t *testing.T) {
	c := startServer(t)
	send := func(reqs ...*greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
		stream, err := c.SayHelloClientStream(context.Background())
		if err != nil {
			return nil, err
		}
		for _, r := range reqs {
			if err := stream.Send(r); err == io.EOF {
				break
			} else if err != nil {
				return nil, err
			}
		}
		return stream.CloseAndRecv()
	}

	reply, err := send(&greeterpb.HelloRequest{Name: "a"}, &greeterpb.HelloRequest{Name: "b"})
	wantStatus(t, err, codes.OK)
	if reply.GetMessage() != "Hello a, b" {
		t.Errorf("reply %q", reply.GetMessage())
	}

	_, err = send(&greeterpb.HelloRequest{Name: "a", FailCode: int32(codes.PermissionDenied)}, &greeterpb.HelloRequest{Name: "b"})
	wantStatus(t, err, codes.PermissionDenied)

	_, err = send()
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("empty stream: %v, want InvalidArgument", err)
	}
}

func TestBidi(t *testing.T) {
	c := startServer(t)
	cases := []struct {
		name     string
		first    *greeterpb.HelloRequest
		wantMsgs int
		wantCode codes.Code
	}{
		{"ok", &greeterpb.HelloRequest{Name: "a"}, 3, codes.OK},
		{"trailers-only", &greeterpb.HelloRequest{FailCode: int32(codes.NotFound)}, 0, codes.NotFound},
		{"fail after 2", &greeterpb.HelloRequest{FailCode: int32(codes.NotFound), FailAfterMessages: 2}, 2, codes.NotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stream, err := c.SayHelloBidi(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			reqs := []*greeterpb.HelloRequest{tc.first, {Name: "b"}, {Name: "c"}}
			for _, r := range reqs {
				if err := stream.Send(r); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.CloseSend(); err != nil {
				t.Fatal(err)
			}
			got, err := recvAll(stream.Recv)
			wantStatus(t, err, tc.wantCode)
			if len(got) != tc.wantMsgs {
				t.Fatalf("%d messages, want %d", len(got), tc.wantMsgs)
			}
		})
	}
}
