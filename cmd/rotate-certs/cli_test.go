package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryCommandHelpHasExamples runs `--help` and `-h` of the root and of
// every subcommand wired in newRootCommand (cobra's own help and completion
// commands aside) and asserts an Examples: section that shows rotate-certs
// at work.
func TestEveryCommandHelpHasExamples(t *testing.T) {
	root := newRootCommand(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	commands := [][]string{{}}
	for _, c := range root.Commands() {
		commands = append(commands, []string{c.Name()})
	}
	require.GreaterOrEqual(t, len(commands), 4, "root, render, init and version at least")
	for _, path := range commands {
		for _, flag := range []string{"--help", "-h"} {
			name := strings.Join(append([]string{"rotate-certs"}, path...), " ") + " " + flag
			t.Run(name, func(t *testing.T) {
				stdout, stderr, code := runCLI(t, "", append(append([]string(nil), path...), flag)...)
				out := stdout + stderr
				require.Equal(t, 0, code, "%s", out)
				_, examples, found := strings.Cut(out, "\nExamples:\n")
				require.True(t, found, "no Examples: section:\n%s", out)
				examples, _, _ = strings.Cut(examples, "\n\n"+"Flags:")
				require.Contains(t, examples, "rotate-certs", "the examples must show the command:\n%s", out)
				require.Contains(t, out, "Usage:")
			})
		}
	}
}
