package greeter

import (
	"testing"

	"google.golang.org/grpc/codes"
)

func TestParseCode(t *testing.T) {
	cases := []struct {
		in   string
		want codes.Code
	}{
		{"0", codes.OK},
		{"5", codes.NotFound},
		{"NOT_FOUND", codes.NotFound},
		{"not_found", codes.NotFound},
		{"NotFound", codes.NotFound},
		{" INTERNAL ", codes.Internal},
		{"DEADLINE_EXCEEDED", codes.DeadlineExceeded},
		{"CANCELLED", codes.Canceled},
		{"Canceled", codes.Canceled},
		{"UNAUTHENTICATED", codes.Unauthenticated},
		{"42", codes.Code(42)},
	}
	for _, c := range cases {
		got, err := ParseCode(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseCode(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "NOPE", "-1", "NOT FOUND"} {
		if _, err := ParseCode(bad); err == nil {
			t.Errorf("ParseCode(%q) succeeded, want an error", bad)
		}
	}
}

func TestCodeNameMatchesGrpc(t *testing.T) {
	// grpc-go spells the names in CamelCase; ours must be the same codes.
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		got, err := ParseCode(c.String())
		if err != nil || got != c {
			t.Errorf("ParseCode(%q) = %v, %v; want %v", c.String(), got, err, c)
		}
		if back, _ := ParseCode(CodeName(c)); back != c {
			t.Errorf("CodeName(%v) = %q does not parse back", c, CodeName(c))
		}
	}
	if got := CodeName(codes.Code(99)); got != "CODE_99" {
		t.Errorf("CodeName(99) = %q", got)
	}
}

func TestFailureMessage(t *testing.T) {
	cases := map[codes.Code]string{
		codes.NotFound:         "not found: ñ",
		codes.Internal:         "internal: ñ",
		codes.DeadlineExceeded: "deadline exceeded: ñ",
	}
	for c, want := range cases {
		if got := FailureMessage(c); got != want {
			t.Errorf("FailureMessage(%v) = %q, want %q", c, got, want)
		}
	}
}
