//go:build devtools

// Command testsummary reads the event stream of `go test -json` on stdin and
// prints what a person running `make test` needs: one line per package as
// it finishes, then the whole output of every failed test and of every
// package that failed to build, and - last, so that it cannot scroll away -
// every skipped test with the reason it gave. It exits 1 when any test or build failed, or when the
// stream holds no result at all.
//
//	go test -json ./... | go run ./internal/testsummary
package main

import (
	"fmt"
	"os"
)

func main() {
	s, err := Summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if err := s.Write(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if !s.OK() {
		os.Exit(1)
	}
}
