// promtext parses the Prometheus text exposition format from stdin with Prometheus's own parser
// (github.com/prometheus/common/expfmt, the one client_golang and Prometheus's tooling use) and
// prints the metric families as JSON (the client_model protobuf messages, protojson), so that
// gospan's tests read /metrics through a parser they did not write. Exit 1 with the parser's
// error on stderr when the text does not parse.
package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protojson"
)

func main() {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "promtext:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Print("[")
	for i, n := range names {
		b, err := protojson.Marshal(families[n])
		if err != nil {
			fmt.Fprintln(os.Stderr, "promtext:", err)
			os.Exit(1)
		}
		if i > 0 {
			fmt.Print(",")
		}
		fmt.Print(string(b))
	}
	fmt.Println("]")
}
