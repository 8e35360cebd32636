// Package greeter holds the greeter service implementation and the helpers the
// example server and client share. The generated code is in greeterpb.
package greeter

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
)

// codeNames are the canonical gRPC status code names, as used by the gRPC
// spec and the OpenTelemetry semantic conventions (rpc.grpc.status_code),
// indexed by code number.
var codeNames = [...]string{
	"OK",
	"CANCELLED",
	"UNKNOWN",
	"INVALID_ARGUMENT",
	"DEADLINE_EXCEEDED",
	"NOT_FOUND",
	"ALREADY_EXISTS",
	"PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION",
	"ABORTED",
	"OUT_OF_RANGE",
	"UNIMPLEMENTED",
	"INTERNAL",
	"UNAVAILABLE",
	"DATA_LOSS",
	"UNAUTHENTICATED",
}

// CodeName returns the canonical name of c, e.g. "NOT_FOUND", or "CODE_<n>"
// for a number outside the known range.
func CodeName(c codes.Code) string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "CODE_" + strconv.FormatUint(uint64(c), 10)
}

// ParseCode accepts a code number ("5"), a canonical name ("NOT_FOUND",
// any case) or grpc-go's spelling ("NotFound").
func ParseCode(s string) (codes.Code, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return codes.Code(n), nil
	}
	want := normalizeCodeName(s)
	for i, name := range codeNames {
		if normalizeCodeName(name) == want {
			return codes.Code(i), nil
		}
	}
	// "CANCELED" is grpc-go's spelling of CANCELLED.
	if want == "canceled" {
		return codes.Canceled, nil
	}
	return 0, fmt.Errorf("unknown gRPC status code %q (want a number 0-16 or a name like NOT_FOUND)", s)
}

func normalizeCodeName(s string) string {
	return strings.ToLower(strings.Replace(s, "_", "", -1))
}

// FailureMessage is the status message the server sends with a requested
// failure: the code name in lower case with spaces, then ": ñ", e.g.
// "not found: ñ". The space and the non-ASCII letter make grpc-go
// percent-encode the grpc-message trailer ("not found: %C3%B1").
func FailureMessage(c codes.Code) string {
	return strings.ToLower(strings.Replace(CodeName(c), "_", " ", -1)) + ": ñ"
}
