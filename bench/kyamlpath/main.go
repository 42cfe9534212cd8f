//go:build devtools

// Command kyamlpath is rotate-certs' function mode without its fast
// ResourceList reader: kyaml's reader and writer around the same processor.
// `make bench` checks that rotate-certs writes the same bytes.
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/resio"
	"github.com/rotate-certs/rotate-certs/fn/rotate"
)

func main() {
	input, err := io.ReadAll(os.Stdin)
	if err == nil {
		err = resio.RunKyaml(input, os.Stdout, rotate.Processor{Now: time.Now}.Run)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
