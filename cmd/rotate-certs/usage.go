package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// Exit statuses, the same for every command: 0 success; 1 the command ran
// and failed (a render error, a check that found a certificate inside
// --fail-within, input that is not what the command reads); 2 a mistake on
// the command line (an unknown flag or command, a wrong number of
// arguments, a bad flag value) or, for function mode, stdin that is not a
// ResourceList with a functionConfig - the command was called the wrong
// way. check also exits 2 when it could not read all its input: a CI gate
// must not pass on what it did not see.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// usageErr is a command-line mistake: main prints it and exits 2.
type usageErr struct{ msg string }

func (e *usageErr) Error() string { return e.msg }

// usageError is a command-line mistake (an unknown flag, a wrong number of
// arguments, a missing required flag), printed as one line that names the
// command and where its help is, with exit status 2.
func usageError(cmd *cobra.Command, err error) error {
	return &usageErr{fmt.Sprintf("%s: %v (see '%s --help')", cmd.CommandPath(), err, cmd.CommandPath())}
}

// isUsageError reports whether err is a command-line mistake.
func isUsageError(err error) bool {
	var u *usageErr
	return errors.As(err, &u)
}

// withUsageErrors makes every command below root report flag and argument
// errors through usageError.
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
