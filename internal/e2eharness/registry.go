package e2eharness

import (
	"bufio"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// servingOn is the line go-containerregistry's cmd/registry logs once it
// listens.
var servingOn = regexp.MustCompile(`serving on port (\d+)`)

// StartRegistry starts the loopback OCI registry (go-containerregistry's
// cmd/registry, installed by `make registry` into bin/) on a free port of
// localhost, and stops it when the test ends. It returns the registry's
// host:port; the registry speaks plain HTTP, which OCI clients use for
// localhost without being told. The registry keeps everything in memory.
// Without the program the test skips, naming `make registry`.
func StartRegistry(t *testing.T) (hostport string) {
	t.Helper()
	bin, ok := findTool("registry")
	if !ok {
		t.Skipf("skipping: the loopback OCI registry is not installed: %s", howToGet("registry"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-port", "0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", bin, err)
	}
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingOn.FindStringSubmatch(sc.Text()); m != nil {
				port <- m[1]
			}
		}
		close(port)
	}()
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	select {
	case p, ok := <-port:
		if !ok {
			t.Fatalf("%s exited before it listened", bin)
		}
		return "localhost:" + strings.TrimSpace(p)
	case <-time.After(30 * time.Second): // a guard against a hang, not a speed assertion
		t.Fatalf("%s did not report its port within 30s", bin)
	}
	return ""
}
