// Command kyamlpath is rotate-certs' function mode without its fast
// ResourceList reader: kyaml's reader and writer around the same processor.
// `make bench` checks that rotate-certs writes the same bytes.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/rotate"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

func main() {
	rw := &kio.ByteReadWriter{Reader: os.Stdin, Writer: os.Stdout, KeepReaderAnnotations: true}
	if err := framework.Execute(rotate.Processor{Now: time.Now}, rw); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
