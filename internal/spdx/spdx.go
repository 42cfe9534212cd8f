// Package spdx writes the SPDX 2.3 software bill of materials of a release
// archive: the archive, the Go binaries inside it and every module each was
// built from, read from the binary's own build information (what `go
// version -m` prints), which is also what SBOM scanners read from a Go
// binary. It works offline; goreleaser runs it (hack/spdx-sbom) for each
// archive.
package spdx

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
)

// Document is an SPDX 2.3 document, in the fields this package writes.
type Document struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      CreationInfo   `json:"creationInfo"`
	Packages          []Package      `json:"packages"`
	Relationships     []Relationship `json:"relationships"`
}

// CreationInfo says who made the document, and when.
type CreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

// Package is an SPDX package: the archive, a binary or a Go module.
type Package struct {
	SPDXID                string        `json:"SPDXID"`
	Name                  string        `json:"name"`
	VersionInfo           string        `json:"versionInfo,omitempty"`
	DownloadLocation      string        `json:"downloadLocation"`
	FilesAnalyzed         bool          `json:"filesAnalyzed"`
	Checksums             []Checksum    `json:"checksums,omitempty"`
	LicenseConcluded      string        `json:"licenseConcluded"`
	LicenseDeclared       string        `json:"licenseDeclared"`
	CopyrightText         string        `json:"copyrightText"`
	ExternalRefs          []ExternalRef `json:"externalRefs,omitempty"`
	PrimaryPackagePurpose string        `json:"primaryPackagePurpose,omitempty"`
}

// Checksum is a package's digest.
type Checksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

// ExternalRef is a package URL (purl).
type ExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

// Relationship links two elements.
type Relationship struct {
	SPDXElementID      string `json:"spdxElementId"`
	RelationshipType   string `json:"relationshipType"`
	RelatedSPDXElement string `json:"relatedSpdxElement"`
}

// Options are what the archive does not say about itself.
type Options struct {
	// Created is the document's creation time: the release commit's,
	// so that the same commit gives the same document.
	Created time.Time
	// Module is the project's own module: a binary built from it gets
	// Version, License and Home; another's are not asserted.
	Module string
	// Version is the release's version. Go does not record the -X flags
	// that stamp it into a binary built with -trimpath, so it is given.
	Version string
	// License is Module's declared license (SPDX identifier).
	License string
	// Home is where Module is developed; it also prefixes the document's
	// namespace.
	Home string
}

// noAssertion is SPDX's "not known".
const noAssertion = "NOASSERTION"

// ForArchive returns the SBOM of a .tar.gz archive named name: the
// archive, each Go binary in it, and the modules and Go standard library
// each binary was built from. An archive without a Go binary is an error:
// its SBOM would be empty.
func ForArchive(name string, archive []byte, opts Options) (*Document, error) {
	sum := sha256.Sum256(archive)
	doc := &Document{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT", Name: name,
		DocumentNamespace: strings.TrimSuffix(opts.Home, "/") + "/spdx/" + name + "-" + hex.EncodeToString(sum[:]),
		CreationInfo: CreationInfo{
			Created:  opts.Created.UTC().Format(time.RFC3339),
			Creators: []string{"Tool: rotate-certs-spdx-sbom", "Organization: rotate-certs"},
		},
	}
	archivePkg := Package{
		SPDXID: "SPDXRef-Archive", Name: name, DownloadLocation: noAssertion,
		Checksums:        []Checksum{{"SHA256", hex.EncodeToString(sum[:])}},
		LicenseConcluded: noAssertion, LicenseDeclared: noAssertion, CopyrightText: noAssertion,
		PrimaryPackagePurpose: "ARCHIVE",
	}
	doc.Packages = append(doc.Packages, archivePkg)
	doc.relate("SPDXRef-DOCUMENT", "DESCRIBES", archivePkg.SPDXID)
	binaries, err := goBinaries(archive)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(binaries) == 0 {
		return nil, fmt.Errorf("%s holds no Go binary", name)
	}
	for _, b := range binaries {
		doc.addBinary(b, opts)
	}
	return doc, nil
}

// binary is one Go executable of an archive.
type binary struct {
	path string
	data []byte
	info *debug.BuildInfo
}

// goBinaries reads a gzipped tar and returns its Go executables.
func goBinaries(archive []byte) ([]binary, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("not a .tar.gz: %w", err)
	}
	tr := tar.NewReader(zr)
	var out []binary
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		info, err := buildinfo.Read(bytes.NewReader(data))
		if err != nil {
			continue // an executable that is not a Go binary
		}
		out = append(out, binary{h.Name, data, info})
	}
}

// addBinary adds a binary, its main module's identity and its
// dependencies.
func (doc *Document) addBinary(b binary, opts Options) {
	sum := sha256.Sum256(b.data)
	id := "SPDXRef-Binary-" + spdxID(path.Base(b.path))
	version, home, license := b.info.Main.Version, noAssertion, noAssertion
	if b.info.Main.Path == opts.Module {
		version, home, license = opts.Version, opts.Home, opts.License
	}
	doc.Packages = append(doc.Packages, Package{
		SPDXID: id, Name: b.info.Main.Path, VersionInfo: version, DownloadLocation: home,
		Checksums:        []Checksum{{"SHA256", hex.EncodeToString(sum[:])}},
		LicenseConcluded: noAssertion, LicenseDeclared: license, CopyrightText: noAssertion,
		ExternalRefs:          purl(b.info.Main.Path, version),
		PrimaryPackagePurpose: "APPLICATION",
	})
	doc.relate("SPDXRef-Archive", "CONTAINS", id)
	goVersion := strings.TrimPrefix(b.info.GoVersion, "go")
	deps := append([]*debug.Module{{Path: "stdlib", Version: goVersion}}, b.info.Deps...)
	for _, m := range deps {
		if m.Replace != nil {
			m = m.Replace
		}
		depID := "SPDXRef-Module-" + spdxID(m.Path+"-"+m.Version)
		if !doc.has(depID) {
			doc.Packages = append(doc.Packages, Package{
				SPDXID: depID, Name: m.Path, VersionInfo: m.Version, DownloadLocation: noAssertion,
				LicenseConcluded: noAssertion, LicenseDeclared: noAssertion, CopyrightText: noAssertion,
				ExternalRefs: purl(m.Path, m.Version), PrimaryPackagePurpose: "LIBRARY",
			})
		}
		doc.relate(id, "DEPENDS_ON", depID)
	}
}

func purl(module, version string) []ExternalRef {
	return []ExternalRef{{"PACKAGE-MANAGER", "purl", "pkg:golang/" + module + "@" + version}}
}

var notIDChar = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// spdxID makes an SPDX identifier of s (letters, digits, '.', '-').
func spdxID(s string) string { return notIDChar.ReplaceAllString(s, "-") }

func (doc *Document) has(id string) bool {
	for _, p := range doc.Packages {
		if p.SPDXID == id {
			return true
		}
	}
	return false
}

func (doc *Document) relate(from, kind, to string) {
	doc.Relationships = append(doc.Relationships, Relationship{from, kind, to})
}

// JSON is the document as written: indented, ending in a newline.
func (doc *Document) JSON() []byte {
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err) // a Document always marshals
	}
	return append(out, '\n')
}
