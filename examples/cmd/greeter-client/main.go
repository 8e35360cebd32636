// Command greeter-client calls the greeter service (greeter/greeter.proto)
// for gospan's tests, demos and benchmarks: a given number of calls (or until
// SIGINT), at a given rate and concurrency, spread over several connections,
// asking the server for a status code, a delay or a number of replies.
//
// At the end it prints one JSON line to stdout, e.g.
//
//	{"calls":3,"codes":{"OK":3},"elapsed_ms":4.1,"p50_us":310,"p99_us":1730,...}
//
// and exits 0 if every call ended with the expected status code (OK, or the
// -fail-code asked for, or DEADLINE_EXCEEDED when -deadline is shorter than
// -delay-ms, or CANCELED when -cancel-after is, or -expect), 1 otherwise or when
// it could not connect, 2 on a usage error.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"gospan.dev/examples/greeter"
	"gospan.dev/examples/greeter/greeterpb"
)

// maxLoggedErrors bounds the unexpected-status lines written to stderr.
const maxLoggedErrors = 10

// rpcKinds are the values of -rpc other than "all", in the order "all"
// cycles through them.
var rpcKinds = []string{"unary", "server-stream", "client-stream", "bidi"}

type config struct {
	addr        string
	rpc         string
	n           int64
	rate        float64
	concurrency int
	conns       int
	name        string
	failCode    codes.Code
	delayMs     int
	deadline    time.Duration
	cancelAfter time.Duration
	failAfter   int
	replyCount  int
	messages    int
	expect      codes.Code
	useTLS      bool
	caFile      string
	serverName  string
	headers     headerFlag
	dialTimeout time.Duration
	quiet       bool
}

// headerFlag collects repeated -header key=value flags.
type headerFlag []string

func (h *headerFlag) String() string { return strings.Join(*h, ",") }

func (h *headerFlag) Set(v string) error {
	i := strings.IndexByte(v, '=')
	if i <= 0 {
		return errors.New("want key=value")
	}
	*h = append(*h, v)
	return nil
}

// codeFlag is a gRPC status code given as a number or a name.
type codeFlag struct {
	code codes.Code
	set  bool
}

func (c *codeFlag) String() string {
	if c == nil || !c.set {
		return ""
	}
	return greeter.CodeName(c.code)
}

func (c *codeFlag) Set(v string) error {
	code, err := greeter.ParseCode(v)
	if err != nil {
		return err
	}
	c.code, c.set = code, true
	return nil
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("greeter-client: ")

	var cfg config
	var failCode, expect codeFlag
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:50051", "server `host:port`")
	flag.StringVar(&cfg.rpc, "rpc", "unary", "call type: unary, server-stream, client-stream, bidi, or all (cycles through the four)")
	flag.Int64Var(&cfg.n, "n", 1, "total number of calls; 0 = until SIGINT/SIGTERM")
	flag.Float64Var(&cfg.rate, "rate", 0, "target calls per second over all workers; 0 = as fast as possible")
	flag.IntVar(&cfg.concurrency, "concurrency", 1, "number of calls in flight at once")
	flag.IntVar(&cfg.conns, "conns", 1, "number of connections (grpc.ClientConn) the calls are spread over, round robin")
	flag.StringVar(&cfg.name, "name", "gospan", "name sent in every request")
	flag.Var(&failCode, "fail-code", "ask the server to fail with this status `code` (NOT_FOUND, INTERNAL, 5, ...)")
	flag.IntVar(&cfg.delayMs, "delay-ms", 0, "ask the server to wait this many `ms` before its first reply")
	flag.DurationVar(&cfg.deadline, "deadline", 0, "deadline of each call, e.g. 50ms; 0 = none")
	flag.DurationVar(&cfg.cancelAfter, "cancel-after", 0, "cancel each call's context this long after it starts, e.g. 50ms; 0 = never")
	flag.IntVar(&cfg.failAfter, "fail-after", 0, "streams with -fail-code: reply messages the server sends before failing (0 = trailers-only)")
	flag.IntVar(&cfg.replyCount, "reply-count", 3, "server-stream: number of replies to ask for")
	flag.IntVar(&cfg.messages, "messages", 3, "client-stream and bidi: number of requests sent per call")
	flag.Var(&expect, "expect", "the status `code` every call should end with (default: derived from -fail-code, -deadline, -cancel-after, -delay-ms)")
	flag.BoolVar(&cfg.useTLS, "tls", false, "connect with TLS")
	flag.StringVar(&cfg.caFile, "ca", "", "PEM CA certificate `file` to verify the server with (-tls); default: system roots")
	flag.StringVar(&cfg.serverName, "server-name", "", "TLS server name to verify (default: the host part of -addr)")
	flag.Var(&cfg.headers, "header", "outgoing metadata `key=value`, repeatable (e.g. authorization=Bearer secret)")
	flag.DurationVar(&cfg.dialTimeout, "dial-timeout", 10*time.Second, "how long to wait for each connection to be ready")
	flag.BoolVar(&cfg.quiet, "quiet", false, "do not log unexpected call results to stderr")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: greeter-client [flags]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	cfg.failCode = failCode.code
	cfg.expect = expectedCode(cfg, expect)

	if err := validate(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "greeter-client: %v\n", err)
		flag.Usage()
		os.Exit(2)
	}
	ok, err := run(cfg)
	if err != nil {
		log.Print(err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// expectedCode is the status every call should end with.
func expectedCode(cfg config, expect codeFlag) codes.Code {
	switch {
	case expect.set:
		return expect.code
	case cfg.cancelAfter > 0 && time.Duration(cfg.delayMs)*time.Millisecond >= cfg.cancelAfter &&
		(cfg.deadline == 0 || cfg.cancelAfter < cfg.deadline):
		return codes.Canceled
	case cfg.deadline > 0 && time.Duration(cfg.delayMs)*time.Millisecond >= cfg.deadline:
		return codes.DeadlineExceeded
	default:
		return cfg.failCode // 0 is OK
	}
}

func validate(cfg config) error {
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", flag.Args())
	}
	if cfg.rpc != "all" && kindIndex(cfg.rpc) < 0 {
		return fmt.Errorf("-rpc %q: want unary, server-stream, client-stream, bidi or all", cfg.rpc)
	}
	switch {
	case cfg.n < 0:
		return errors.New("-n must be >= 0")
	case cfg.rate < 0:
		return errors.New("-rate must be >= 0")
	case cfg.concurrency < 1:
		return errors.New("-concurrency must be >= 1")
	case cfg.conns < 1:
		return errors.New("-conns must be >= 1")
	case cfg.messages < 1:
		return errors.New("-messages must be >= 1")
	case cfg.delayMs < 0 || cfg.failAfter < 0 || cfg.replyCount < 0:
		return errors.New("-delay-ms, -fail-after and -reply-count must be >= 0")
	case cfg.deadline < 0 || cfg.cancelAfter < 0:
		return errors.New("-deadline and -cancel-after must be >= 0")
	case (cfg.caFile != "" || cfg.serverName != "") && !cfg.useTLS:
		return errors.New("-ca and -server-name need -tls")
	}
	return nil
}

func kindIndex(rpc string) int {
	for i, k := range rpcKinds {
		if k == rpc {
			return i
		}
	}
	return -1
}

// summary is the JSON line printed at the end.
type summary struct {
	Calls      int64            `json:"calls"`
	Codes      map[string]int64 `json:"codes"`
	ElapsedMs  float64          `json:"elapsed_ms"`
	P50Us      int64            `json:"p50_us"`
	P90Us      int64            `json:"p90_us"`
	P99Us      int64            `json:"p99_us"`
	MaxUs      int64            `json:"max_us"`
	CallsPerS  float64          `json:"calls_per_s"`
	Messages   int64            `json:"messages"`
	RPC        string           `json:"rpc"`
	Expected   string           `json:"expected"`
	Unexpected int64            `json:"unexpected"`
	// CPU time this client process used (getrusage RUSAGE_SELF), for overhead benchmarks.
	CPUUserMs float64 `json:"cpu_user_ms"`
	CPUSysMs  float64 `json:"cpu_sys_ms"`
}

// run makes the calls and prints the summary; ok reports whether every call
// ended with the expected code.
func run(cfg config) (ok bool, err error) {
	creds, err := transportCredentials(cfg)
	if err != nil {
		return false, err
	}

	// First SIGINT/SIGTERM: start no new calls, let the ones in flight end.
	// Second: cancel those too.
	stopIssuing := make(chan struct{})
	callCtx, cancelCalls := context.WithCancel(context.Background())
	defer cancelCalls()
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	go func() {
		select {
		case <-sigc:
			close(stopIssuing)
		case <-callCtx.Done():
			return
		}
		select {
		case <-sigc:
			cancelCalls()
		case <-callCtx.Done():
		}
	}()

	conns := make([]*grpc.ClientConn, 0, cfg.conns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < cfg.conns; i++ {
		c, err := dial(callCtx, cfg, creds)
		if err != nil {
			return false, fmt.Errorf("connecting to %s (connection %d of %d): %v", cfg.addr, i+1, cfg.conns, err)
		}
		conns = append(conns, c)
	}
	clients := make([]greeterpb.GreeterClient, len(conns))
	for i, c := range conns {
		clients[i] = greeterpb.NewGreeterClient(c)
	}

	var md metadata.MD
	if len(cfg.headers) > 0 {
		kv := make([]string, 0, 2*len(cfg.headers))
		for _, h := range cfg.headers {
			i := strings.IndexByte(h, '=')
			kv = append(kv, h[:i], h[i+1:])
		}
		md = metadata.Pairs(kv...)
	}

	var logged int32
	start := time.Now()
	sched := newScheduler(cfg.n, cfg.rate, start, stopIssuing)
	results := make([]*workerResult, cfg.concurrency)
	var wg sync.WaitGroup
	for w := range results {
		res := newWorkerResult()
		results[w] = res
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k, more := sched.claim()
				if !more {
					return
				}
				kind := cfg.rpc
				if kind == "all" {
					kind = rpcKinds[k%int64(len(rpcKinds))]
				}
				client := clients[k%int64(len(clients))]
				began := time.Now()
				msgs, err := call(callCtx, cfg, md, client, kind)
				res.record(status.Code(err), time.Since(began), msgs)
				if code := status.Code(err); code != cfg.expect && !cfg.quiet {
					if n := atomic.AddInt32(&logged, 1); n <= maxLoggedErrors {
						log.Printf("call %d (%s): %s: %v (expected %s)", k, kind, greeter.CodeName(code), err, greeter.CodeName(cfg.expect))
					} else if n == maxLoggedErrors+1 {
						log.Printf("further unexpected results are not logged")
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)

	total := newWorkerResult()
	for _, r := range results {
		total.merge(r)
	}
	s := summary{
		Calls:     total.calls,
		Codes:     map[string]int64{},
		ElapsedMs: round3(float64(elapsed) / float64(time.Millisecond)),
		P50Us:     total.latency.quantile(0.50),
		P90Us:     total.latency.quantile(0.90),
		P99Us:     total.latency.quantile(0.99),
		MaxUs:     total.latency.max,
		Messages:  total.messages,
		RPC:       cfg.rpc,
		Expected:  greeter.CodeName(cfg.expect),
	}
	if elapsed > 0 {
		s.CallsPerS = round3(float64(total.calls) / elapsed.Seconds())
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s.CPUUserMs = round3(float64(ru.Utime.Nano()) / 1e6)
		s.CPUSysMs = round3(float64(ru.Stime.Nano()) / 1e6)
	}
	for code, n := range total.codes {
		s.Codes[greeter.CodeName(code)] = n
		if code != cfg.expect {
			s.Unexpected += n
		}
	}
	line, err := json.Marshal(s)
	if err != nil {
		return false, err
	}
	fmt.Println(string(line))
	return s.Unexpected == 0, nil
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func transportCredentials(cfg config) (grpc.DialOption, error) {
	if !cfg.useTLS {
		// grpc.WithInsecure is deprecated in new grpc-go, but its replacement
		// (insecure.NewCredentials) does not exist before v1.34.
		return grpc.WithInsecure(), nil
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
	return grpc.WithTransportCredentials(credentials.NewTLS(tc)), nil
}

// dial opens one connection and waits until it is ready, so that the
// latencies measured do not include connection set-up and -conns really
// opens that many connections. (WithBlock and DialContext are deprecated in
// new grpc-go; grpc.NewClient does not exist before v1.63.)
func dial(ctx context.Context, cfg config, creds grpc.DialOption) (*grpc.ClientConn, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.dialTimeout)
	defer cancel()
	return grpc.DialContext(ctx, cfg.addr, creds, grpc.WithBlock())
}

// call makes one call of the given kind and returns the number of reply
// messages received and the call's error (nil for OK).
func call(ctx context.Context, cfg config, md metadata.MD, client greeterpb.GreeterClient, kind string) (int64, error) {
	// The cancel also releases a stream that ends early on an error.
	var cancel context.CancelFunc
	if cfg.deadline > 0 {
		ctx, cancel = context.WithTimeout(ctx, cfg.deadline)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	if cfg.cancelAfter > 0 {
		// the caller gives up on the call: grpc-go resets the stream (RST_STREAM CANCEL)
		t := time.AfterFunc(cfg.cancelAfter, cancel)
		defer t.Stop()
	}
	if md != nil {
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	req := &greeterpb.HelloRequest{
		Name:              cfg.name,
		FailCode:          int32(cfg.failCode),
		FailAfterMessages: int32(cfg.failAfter),
		DelayMs:           int32(cfg.delayMs),
		ReplyCount:        int32(cfg.replyCount),
	}
	switch kind {
	case "unary":
		if _, err := client.SayHello(ctx, req); err != nil {
			return 0, err
		}
		return 1, nil
	case "server-stream":
		stream, err := client.SayHelloServerStream(ctx, req)
		if err != nil {
			return 0, err
		}
		return drain(stream.Recv, 0)
	case "client-stream":
		stream, err := client.SayHelloClientStream(ctx)
		if err != nil {
			return 0, err
		}
		for i := 0; i < cfg.messages; i++ {
			// io.EOF means the server has ended the call; CloseAndRecv
			// returns its status.
			if err := stream.Send(req); err == io.EOF {
				break
			} else if err != nil {
				return 0, err
			}
		}
		if _, err := stream.CloseAndRecv(); err != nil {
			return 0, err
		}
		return 1, nil
	case "bidi":
		stream, err := client.SayHelloBidi(ctx)
		if err != nil {
			return 0, err
		}
		var msgs int64
		for i := 0; i < cfg.messages; i++ {
			if err := stream.Send(req); err == io.EOF {
				break // the server has ended the call; drain reads its status
			} else if err != nil {
				return msgs, err
			}
			if _, err := stream.Recv(); err == io.EOF {
				return msgs, nil
			} else if err != nil {
				return msgs, err
			}
			msgs++
		}
		if err := stream.CloseSend(); err != nil {
			return msgs, err
		}
		return drain(stream.Recv, msgs)
	}
	return 0, fmt.Errorf("unknown rpc kind %q", kind)
}

// drain receives until the end of the stream, counting messages.
func drain(recv func() (*greeterpb.HelloReply, error), msgs int64) (int64, error) {
	for {
		_, err := recv()
		if err == io.EOF {
			return msgs, nil
		}
		if err != nil {
			return msgs, err
		}
		msgs++
	}
}

// scheduler hands out call numbers 0, 1, 2, ... (up to n, unless n is 0)
// and paces them: call k starts no earlier than start + k/rate. Calls that
// fall behind the schedule start at once, so the average rate holds.
type scheduler struct {
	claimed  int64 // updated atomically; first field for 64-bit alignment
	n        int64
	interval time.Duration
	start    time.Time
	stop     <-chan struct{}
}

func newScheduler(n int64, rate float64, start time.Time, stop <-chan struct{}) *scheduler {
	s := &scheduler{n: n, start: start, stop: stop}
	if rate > 0 {
		s.interval = time.Duration(float64(time.Second) / rate)
	}
	return s
}

// claim returns the next call number, after waiting for its slot; false when
// the calls are used up or the client is stopping.
func (s *scheduler) claim() (int64, bool) {
	select {
	case <-s.stop:
		return 0, false
	default:
	}
	k := atomic.AddInt64(&s.claimed, 1) - 1
	if s.n > 0 && k >= s.n {
		return 0, false
	}
	if s.interval > 0 {
		if wait := time.Until(s.start.Add(time.Duration(k) * s.interval)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-s.stop:
				t.Stop()
				return 0, false
			}
		}
	}
	return k, true
}

// workerResult is what one worker saw; merged at the end.
type workerResult struct {
	calls    int64
	messages int64
	codes    map[codes.Code]int64
	latency  *histogram
}

func newWorkerResult() *workerResult {
	return &workerResult{codes: map[codes.Code]int64{}, latency: newHistogram()}
}

func (r *workerResult) record(code codes.Code, d time.Duration, msgs int64) {
	r.calls++
	r.messages += msgs
	r.codes[code]++
	r.latency.add(d.Microseconds())
}

func (r *workerResult) merge(o *workerResult) {
	r.calls += o.calls
	r.messages += o.messages
	for c, n := range o.codes {
		r.codes[c] += n
	}
	r.latency.merge(o.latency)
}
