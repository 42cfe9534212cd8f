//go:build devtools

// Command spdx-sbom writes the SPDX 2.3 SBOM (JSON) of a release archive,
// offline: goreleaser runs it for each archive (.goreleaser.yaml, sboms).
//
//	spdx-sbom -o rotate-certs_1.2.3_linux_amd64.tar.gz.spdx.json -version v1.2.3 rotate-certs_1.2.3_linux_amd64.tar.gz
//
// The creation time is SOURCE_DATE_EPOCH (the release commit's time, so that
// a rebuild of the commit gives the same document), else now.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rotate-certs/rotate-certs/internal/spdx"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "spdx-sbom:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("spdx-sbom", flag.ContinueOnError)
	out := fs.String("o", "", "the SBOM file to write (required)")
	version := fs.String("version", "", "the release's version, stamped into the module's binaries (required)")
	module := fs.String("module", "github.com/rotate-certs/rotate-certs", "the project's module, whose license and home are asserted")
	license := fs.String("license", "Apache-2.0", "the module's license, an SPDX identifier")
	home := fs.String("home", "https://github.com/rotate-certs/rotate-certs", "where the module is developed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *version == "" || fs.NArg() != 1 {
		return fmt.Errorf("usage: spdx-sbom -o DOCUMENT -version VERSION ARCHIVE.tar.gz")
	}
	created := time.Now()
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds", epoch)
		}
		created = time.Unix(sec, 0)
	}
	archive, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	doc, err := spdx.ForArchive(filepath.Base(fs.Arg(0)), archive, spdx.Options{Created: created, Module: *module, Version: *version, License: *license, Home: *home})
	if err != nil {
		return err
	}
	return os.WriteFile(*out, doc.JSON(), 0o644)
}
