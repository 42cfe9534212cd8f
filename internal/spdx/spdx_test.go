package spdx

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// archiveOf returns a .tar.gz holding files by name (mode 0755 for those
// in exec).
func archiveOf(t *testing.T, files map[string][]byte, exec map[string]bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range files {
		mode := int64(0o644)
		if exec[name] {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var opts = Options{Created: time.Unix(1795000000, 0), Module: "github.com/rotate-certs/rotate-certs", Version: "v1.0.0",
	License: "Apache-2.0", Home: "https://github.com/rotate-certs/rotate-certs"}

// TestForArchive: the test binary itself, in an archive, is described with
// every module its build information lists, each related to it; the same
// archive gives the same document.
func TestForArchive(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	archive := archiveOf(t, map[string][]byte{"LICENSE": []byte("text"), "spdx.test": bin}, map[string]bool{"spdx.test": true})
	doc, err := ForArchive("x_1.0.0_linux_amd64.tar.gz", archive, opts)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := debug.ReadBuildInfo()
	ids := map[string]Package{}
	for _, p := range doc.Packages {
		if _, dup := ids[p.SPDXID]; dup {
			t.Errorf("SPDXID %s twice", p.SPDXID)
		}
		ids[p.SPDXID] = p
	}
	binPkg, ok := ids["SPDXRef-Binary-spdx.test"]
	if !ok || binPkg.Name != info.Main.Path || binPkg.LicenseDeclared != "Apache-2.0" || binPkg.VersionInfo != "v1.0.0" {
		t.Fatalf("binary package %+v", binPkg)
	}
	dependsOn := map[string]bool{}
	for _, r := range doc.Relationships {
		if _, ok := ids[r.RelatedSPDXElement]; !ok {
			t.Errorf("relationship %+v names no package", r)
		}
		if r.SPDXElementID == binPkg.SPDXID && r.RelationshipType == "DEPENDS_ON" {
			dependsOn[ids[r.RelatedSPDXElement].Name+"@"+ids[r.RelatedSPDXElement].VersionInfo] = true
		}
	}
	want := []string{"stdlib@" + strings.TrimPrefix(info.GoVersion, "go")}
	for _, m := range info.Deps {
		want = append(want, m.Path+"@"+m.Version)
	}
	for _, w := range want {
		if !dependsOn[w] {
			t.Errorf("no DEPENDS_ON %s", w)
		}
	}
	again, _ := ForArchive("x_1.0.0_linux_amd64.tar.gz", archive, opts)
	if !bytes.Equal(doc.JSON(), again.JSON()) {
		t.Error("two documents of one archive differ")
	}
	var generic map[string]any
	if err := json.Unmarshal(doc.JSON(), &generic); err != nil || generic["spdxVersion"] != "SPDX-2.3" {
		t.Errorf("JSON %v: %v", err, generic["spdxVersion"])
	}
}

// TestForArchiveWithoutABinary: an archive with no Go executable has no
// SBOM to give, and a file that is not a .tar.gz is refused.
func TestForArchiveWithoutABinary(t *testing.T) {
	for name, data := range map[string][]byte{
		"text only":      archiveOf(t, map[string][]byte{"README.md": []byte("#")}, map[string]bool{"README.md": true}),
		"not an archive": []byte("plain"),
	} {
		if _, err := ForArchive("x.tar.gz", data, opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
