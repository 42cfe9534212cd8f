package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/spf13/cobra"
)

// Exit statuses: every command uses these (check documents its own 1 and
// 2 with the same meaning).
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// exitError ends a command with an exit status. err, when set, is what to
// print first; nil when the command has said why already.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exit returns the exit error of status code, err printed first (nil:
// nothing to print).
func exit(code int, err error) error { return &exitError{code: code, err: err} }

// run executes cmd and returns its exit status, after printing on stderr
// the error that ended it, if any, scrubbed of key material.
func run(cmd *cobra.Command, stderr io.Writer) int {
	err := cmd.Execute()
	if err == nil {
		return exitOK
	}
	code := exitFailed
	var e *exitError
	if errors.As(err, &e) {
		code, err = e.code, e.err
	}
	if err != nil {
		fmt.Fprintln(stderr, kube.ScrubError(err))
	}
	return code
}

// usageError is a command-line mistake (an unknown flag, a wrong number of
// arguments): exit status 2, with a pointer to the command's help.
func usageError(cmd *cobra.Command, err error) error {
	return exit(exitUsage, fmt.Errorf("%s: %v (see '%s --help')", cmd.CommandPath(), err, cmd.CommandPath()))
}

// withUsageErrors makes every flag and argument error of root and its
// subcommands a usageError.
func withUsageErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(usageError)
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if check := c.Args; check != nil {
			c.Args = func(cmd *cobra.Command, args []string) error {
				if err := check(cmd, args); err != nil {
					return usageError(cmd, err)
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
