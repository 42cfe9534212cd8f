package e2eharness

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"testing"
	"time"
)

// StartRegistry starts go-containerregistry's registry (bin/registry,
// installed by `make registry`; it keeps what is pushed in memory) on a
// free loopback port and returns its host:port once it answers the OCI
// distribution API; it is stopped when the test ends. Without the binary
// the test skips, naming `make registry`. The registry speaks plain HTTP,
// which clients built on go-containerregistry (ko, cosign, flux) use for
// 127.0.0.1 without being told; podman needs --tls-verify=false.
func StartRegistry(t *testing.T) (hostport string) {
	t.Helper()
	bin := Tool(t, "registry")
	ctx, cancel := context.WithCancel(context.Background())
	// -port 0: the kernel picks the port, and the registry logs it.
	cmd := exec.CommandContext(ctx, bin, "-port", "0")
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	port, logged := make(chan string, 1), make(chan string, 1)
	go func() {
		var all string
		for s := bufio.NewScanner(out); s.Scan(); {
			all += s.Text() + "\n"
			if m := servingOn.FindStringSubmatch(s.Text()); m != nil {
				port <- m[1]
			}
		}
		logged <- all
	}()
	select {
	case p := <-port:
		hostport = net.JoinHostPort("127.0.0.1", p)
	case all := <-logged:
		t.Fatalf("%s exited before serving:\n%s", bin, all)
	case <-time.After(time.Minute):
		t.Fatalf("%s did not say which port it serves on within a minute", bin)
	}
	if err := waitForRegistry(hostport); err != nil {
		t.Fatalf("registry on %s: %v", hostport, err)
	}
	return hostport
}

// servingOn is the registry's log line with its port.
var servingOn = regexp.MustCompile(`serving on port ([0-9]+)`)

// waitForRegistry polls GET /v2/ until the registry answers (at most a
// minute: a guard against a hang, not a speed assertion).
func waitForRegistry(hostport string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := client.Get("http://" + hostport + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /v2/: %s", resp.Status)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
