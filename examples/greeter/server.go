package greeter

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"gospan.dev/examples/greeter/greeterpb"
)

// Server implements greeterpb.GreeterServer. Each call behaves as its
// (first) request asks: see the HelloRequest fields in greeter.proto.
type Server struct {
	greeterpb.UnimplementedGreeterServer

	// Logf, when set, is called once per finished call.
	Logf func(format string, args ...interface{})
}

// NewServer returns a Server that does not log.
func NewServer() *Server { return &Server{} }

func (s *Server) logf(format string, args ...interface{}) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// SayHello answers one greeting, after delay_ms, or fails with fail_code.
func (s *Server) SayHello(ctx context.Context, req *greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
	if err := sleep(ctx, req.GetDelayMs()); err != nil {
		s.logf("SayHello name=%q: %v", req.GetName(), err)
		return nil, err
	}
	if err := requestedFailure(req); err != nil {
		s.logf("SayHello name=%q: %v", req.GetName(), err)
		return nil, err
	}
	s.logf("SayHello name=%q: OK", req.GetName())
	return &greeterpb.HelloReply{Message: "Hello " + req.GetName()}, nil
}

// SayHelloServerStream sends reply_count greetings. With fail_code it fails
// after fail_after_messages of them (0: before any, a trailers-only response).
func (s *Server) SayHelloServerStream(req *greeterpb.HelloRequest, stream greeterpb.Greeter_SayHelloServerStreamServer) error {
	err := s.serverStream(req, stream)
	s.logf("SayHelloServerStream name=%q: %v", req.GetName(), statusText(err))
	return err
}

func (s *Server) serverStream(req *greeterpb.HelloRequest, stream greeterpb.Greeter_SayHelloServerStreamServer) error {
	if err := sleep(stream.Context(), req.GetDelayMs()); err != nil {
		return err
	}
	count := req.GetReplyCount()
	if count <= 0 {
		count = 1
	}
	fail := requestedFailure(req)
	for i := int32(0); i < count; i++ {
		if fail != nil && i >= req.GetFailAfterMessages() {
			return fail
		}
		reply := &greeterpb.HelloReply{Message: fmt.Sprintf("Hello %s #%d", req.GetName(), i), Index: i}
		if err := stream.Send(reply); err != nil {
			return err
		}
	}
	return fail
}

// SayHelloClientStream reads every request and answers one greeting naming
// them all. The first request decides the behaviour; with fail_code the call
// fails, without any reply message, once max(1, fail_after_messages)
// requests have arrived or the request stream ends.
func (s *Server) SayHelloClientStream(stream greeterpb.Greeter_SayHelloClientStreamServer) error {
	var first *greeterpb.HelloRequest
	err := s.clientStream(stream, &first)
	s.logf("SayHelloClientStream name=%q: %v", first.GetName(), statusText(err))
	return err
}

func (s *Server) clientStream(stream greeterpb.Greeter_SayHelloClientStreamServer, first **greeterpb.HelloRequest) error {
	var names []string
	var fail error
	failAfter := int32(1)
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if *first == nil {
			*first = req
			if err := sleep(stream.Context(), req.GetDelayMs()); err != nil {
				return err
			}
			fail = requestedFailure(req)
			if req.GetFailAfterMessages() > failAfter {
				failAfter = req.GetFailAfterMessages()
			}
		}
		names = append(names, req.GetName())
		if fail != nil && int32(len(names)) >= failAfter {
			return fail
		}
	}
	if *first == nil {
		return status.Error(codes.InvalidArgument, "no request received")
	}
	if fail != nil {
		return fail
	}
	reply := &greeterpb.HelloReply{Message: "Hello " + strings.Join(names, ", ")}
	return stream.SendAndClose(reply)
}

// SayHelloBidi answers each request with one greeting. The first request
// decides the behaviour; with fail_code the call fails after
// fail_after_messages replies (0: before any, a trailers-only response).
func (s *Server) SayHelloBidi(stream greeterpb.Greeter_SayHelloBidiServer) error {
	var first *greeterpb.HelloRequest
	err := s.bidi(stream, &first)
	s.logf("SayHelloBidi name=%q: %v", first.GetName(), statusText(err))
	return err
}

func (s *Server) bidi(stream greeterpb.Greeter_SayHelloBidiServer, first **greeterpb.HelloRequest) error {
	var fail error
	for i := int32(0); ; i++ {
		req, err := stream.Recv()
		if err == io.EOF {
			return fail
		}
		if err != nil {
			return err
		}
		if *first == nil {
			*first = req
			if err := sleep(stream.Context(), req.GetDelayMs()); err != nil {
				return err
			}
			fail = requestedFailure(req)
		}
		if fail != nil && i >= (*first).GetFailAfterMessages() {
			return fail
		}
		reply := &greeterpb.HelloReply{Message: "Hello " + req.GetName(), Index: i}
		if err := stream.Send(reply); err != nil {
			return err
		}
	}
}

// requestedFailure returns the status error req asks for, or nil.
func requestedFailure(req *greeterpb.HelloRequest) error {
	if req.GetFailCode() == 0 {
		return nil
	}
	c := codes.Code(req.GetFailCode())
	return status.Error(c, FailureMessage(c))
}

// sleep waits ms milliseconds, or returns the status error for the call's
// context if that ends first.
func sleep(ctx context.Context, ms int32) error {
	if ms <= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded {
			return status.Error(codes.DeadlineExceeded, "deadline exceeded while delaying")
		}
		return status.Error(codes.Canceled, "cancelled while delaying")
	}
}

func statusText(err error) string {
	if err == nil {
		return "OK"
	}
	st, _ := status.FromError(err)
	return CodeName(st.Code()) + " " + st.Message()
}
