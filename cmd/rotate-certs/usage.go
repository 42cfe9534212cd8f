package main

import (
	"fmt"
	"io"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/spf13/cobra"
)

// run executes cmd and returns its exit status (exit.CodeOf), after
// printing on stderr the error that ended it, if any, through the printer
// of the command that ran: main's one place that prints an ending error.
func run(cmd *cobra.Command, stderr io.Writer) int {
	ran, err := cmd.ExecuteC()
	if ran == nil {
		ran = cmd
	}
	logFor(ran, stderr).Error(err)
	return int(exit.CodeOf(err))
}

// logFor is the printer of cmd's messages on stderr: each begins with the
// command's path ("rotate-certs", "rotate-certs check").
func logFor(cmd *cobra.Command, stderr io.Writer) exit.Printer {
	return exit.NewPrinter(stderr, cmd.CommandPath())
}

// usageError is a command-line mistake (an unknown flag, a wrong number of
// arguments): exit status 2, with a pointer to the command's help.
func usageError(cmd *cobra.Command, err error) error {
	return exit.Misuse(fmt.Errorf("%v (see '%s --help')", err, cmd.CommandPath()))
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
