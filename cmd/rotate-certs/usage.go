package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// usageError is a command-line mistake (an unknown flag, a wrong number of
// arguments, a missing required flag), printed as one line that names the
// command and where its help is.
func usageError(cmd *cobra.Command, err error) error {
	return fmt.Errorf("%s: %w (see '%s --help')", cmd.CommandPath(), err, cmd.CommandPath())
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
