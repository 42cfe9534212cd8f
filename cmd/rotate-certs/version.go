package main

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Set at build time with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = ""
)

func versionString() string {
	info, _ := debug.ReadBuildInfo()
	v, c := resolveVersion(version, commit, info)
	return fmt.Sprintf("rotate-certs %s (commit %s)", v, c)
}

// pseudoVersionCommit matches the commit at the end of a Go pseudo-version
// (v0.0.0-20260101120000-0123456789ab, v1.2.4-0.20260101120000-0123456789ab).
var pseudoVersionCommit = regexp.MustCompile(`[-.]\d{14}-([0-9a-f]{12})$`)

// resolveVersion returns the version and commit to print. Values set with
// -ldflags win (make build, the Dockerfile). Otherwise they come from what
// the Go toolchain recorded in the binary: `go install ...@v0.1.0` records
// the module version and no VCS data (the commit is then unknown; a
// pseudo-version carries the commit's first 12 digits), `go build` in a
// checkout records vcs.revision and vcs.modified. A build from a modified
// tree gets "-dirty" after the commit.
func resolveVersion(ldVersion, ldCommit string, info *debug.BuildInfo) (string, string) {
	v, c := ldVersion, ldCommit
	if c == "unknown" {
		c = ""
	}
	if info == nil {
		return cmp.Or(v, "dev"), cmp.Or(c, "unknown")
	}
	mainVersion := info.Main.Version
	if mainVersion == "(devel)" {
		mainVersion = ""
	}
	if v == "" || v == "dev" {
		v = mainVersion
	}
	if c == "" {
		dirty := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				c = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		bare, plusDirty := strings.CutSuffix(mainVersion, "+dirty")
		if c == "" {
			if m := pseudoVersionCommit.FindStringSubmatch(bare); m != nil {
				c, dirty = m[1], dirty || plusDirty
			}
		}
		if c != "" && dirty {
			c += "-dirty"
		}
	}
	return cmp.Or(v, "dev"), cmp.Or(c, "unknown")
}

func newVersionCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and commit",
		Long: `version prints the release version and the git commit the binary was built
from. make build and the Dockerfile set both; a binary from go install
...@VERSION reports the module version Go recorded (the commit only for a
pseudo-version), one from go build in a checkout reports "dev" and the
checkout's commit ("-dirty" when it had changes).
rotate-certs --version prints the same line.`,
		Example: `  rotate-certs version
  rotate-certs --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(stdout, versionString())
			return err
		},
	}
}
