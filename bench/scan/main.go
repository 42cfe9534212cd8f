//go:build devtools

// Command scan is the floor of `make bench`: it reads a ResourceList from
// stdin, finds where each item starts (a byte scan for "\n- ") and writes
// the list to stdout unchanged. No function that reads its input can do
// less.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

func main() {
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	items := bytes.Count(input, []byte("\n- "))
	if _, err := os.Stdout.Write(input); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, items, "items")
}
