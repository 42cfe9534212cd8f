package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// openPTY returns the terminal end of a new pseudo-terminal.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here (/dev/ptmx: %v)", err)
	}
	t.Cleanup(func() { master.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { tty.Close() })
	return tty
}

// TestHintOnTerminal: rotate-certs with no arguments on a terminal says
// what it waits for; on a pipe, a file or /dev/null (what kustomize, kpt
// and scripts give it) it says nothing.
func TestHintOnTerminal(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer devNull.Close()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name  string
		stdin io.Reader
		hint  bool
	}{
		{"a terminal", openPTY(t), true},
		{"a pipe", r, false},
		{"/dev/null", devNull, false},
		{"a reader", strings.NewReader(""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			hintOnTerminal(tc.stdin, exit.NewPrinter(&stderr, "rotate-certs"))
			if !tc.hint {
				require.Empty(t, stderr.String())
				return
			}
			require.Equal(t, "rotate-certs: function mode: reading a ResourceList from stdin (end with Ctrl-D); see rotate-certs --help for render, check and init\n", stderr.String())
		})
	}
}
