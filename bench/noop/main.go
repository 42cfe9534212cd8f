//go:build devtools

// Command noop is the baseline of `make bench`: a kyaml framework function
// that does nothing. It reads and writes the ResourceList exactly as any
// function built on kyaml's framework does, so its cost is the floor every
// such function pays.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

func main() {
	nothing := framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil })
	rw := &kio.ByteReadWriter{Reader: os.Stdin, Writer: os.Stdout, KeepReaderAnnotations: true}
	if err := framework.Execute(nothing, rw); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
