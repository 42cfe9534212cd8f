package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
	"github.com/rotate-certs/rotate-certs/internal/golden"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdxlib"
)

// platforms are the release's targets.
var platforms = []struct{ goos, goarch string }{{"darwin", "amd64"}, {"darwin", "arm64"}, {"linux", "amd64"}, {"linux", "arm64"}}

// snapshot is a `goreleaser release --snapshot` of a copy of the
// repository: its dist directory, version and commit.
type snapshot struct {
	dist, version, commit string
}

// runSnapshot copies the repository's files (tracked and untracked, not
// ignored) into a fresh git repository with one commit - the test never
// writes into the repository, whose YAML other tests read - makes a cosign
// key pair, and runs goreleaser there as `make release-snapshot` does,
// signing the checksums offline with that key.
func runSnapshot(t *testing.T) snapshot {
	t.Helper()
	goreleaser, cosign := e2eharness.Tool(t, "goreleaser"), e2eharness.Tool(t, "cosign")
	work := t.TempDir()
	copyRepository(t, work)
	git := func(args ...string) string {
		r := e2eharness.Cmd{Dir: work, Env: append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE=2026-11-01T00:00:00Z",
			"GIT_COMMITTER_DATE=2026-11-01T00:00:00Z")}.Run(t, "git", args...)
		if r.Err != nil {
			t.Fatalf("git %v: %v\n%s", args, r.Err, r.Stderr)
		}
		return strings.TrimSpace(r.Stdout)
	}
	git("init", "-q")
	// goreleaser reads the remote's address, and without one makes up a
	// commit ("none") for a snapshot.
	git("remote", "add", "origin", "https://github.com/rotate-certs/rotate-certs.git")
	git("add", "-A")
	git("commit", "-q", "-m", "snapshot")
	keys := t.TempDir()
	env := append(os.Environ(), "COSIGN_PASSWORD=test-only")
	if r := (e2eharness.Cmd{Dir: keys, Env: env}).Run(t, cosign, "generate-key-pair"); r.Err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", r.Err, r.Stderr)
	}
	key, err := os.ReadFile(filepath.Join(keys, "cosign.key"))
	if err != nil {
		t.Fatal(err)
	}
	env = append(env, "COSIGN_PRIVATE_KEY="+string(key), "COSIGN_TLOG_UPLOAD=false",
		"PATH="+filepath.Dir(cosign)+string(os.PathListSeparator)+os.Getenv("PATH"))
	r := e2eharness.Cmd{Dir: work, Env: env, Ctx: t.Context()}.Run(t, goreleaser, "release", "--snapshot", "--clean")
	if r.Err != nil {
		t.Fatalf("goreleaser release --snapshot: %v\n%s%s", r.Err, r.Stdout, r.Stderr)
	}
	var meta struct {
		Version string `json:"version"`
		Commit  string `json:"commit"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(work, "dist", "metadata.json")), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Commit != git("rev-parse", "HEAD") || !strings.Contains(meta.Version, "-SNAPSHOT-") {
		t.Fatalf("dist/metadata.json: version %q commit %q\n%s", meta.Version, meta.Commit, r.Stderr)
	}
	if err := os.WriteFile(filepath.Join(work, "cosign.pub"), mustRead(t, filepath.Join(keys, "cosign.pub")), 0o644); err != nil {
		t.Fatal(err)
	}
	return snapshot{dist: filepath.Join(work, "dist"), version: meta.Version, commit: meta.Commit}
}

// copyRepository copies what git lists (tracked, and untracked but not
// ignored) into dst.
func copyRepository(t *testing.T, dst string) {
	t.Helper()
	r := e2eharness.Cmd{Dir: golden.Path()}.Run(t, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if r.Err != nil {
		t.Fatalf("git ls-files: %v\n%s", r.Err, r.Stderr)
	}
	for _, rel := range strings.Split(strings.TrimRight(r.Stdout, "\x00"), "\x00") {
		src := golden.Path(rel)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, rel), mustRead(t, src), info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReleaseSnapshot: `goreleaser release --snapshot` offline gives an
// archive per platform whose binary is the snapshot version's - run here
// for this machine's platform, and for every platform the very bytes the
// Dockerfile's build line makes with that version and commit - checksums
// that verify, a cosign signature over them, and a valid SPDX SBOM per
// archive.
func TestReleaseSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release; skipped with -short")
	}
	s := runSnapshot(t)
	sums := checkChecksums(t, s.dist)
	for _, p := range platforms {
		name := fmt.Sprintf("rotate-certs_%s_%s_%s.tar.gz", s.version, p.goos, p.goarch)
		t.Run(p.goos+"-"+p.goarch, func(t *testing.T) {
			if _, ok := sums[name]; !ok {
				t.Fatalf("checksums.txt does not list %s", name)
			}
			archive := mustRead(t, filepath.Join(s.dist, name))
			checkArchive(t, s, p.goos, p.goarch, archive)
			checkSBOM(t, filepath.Join(s.dist, name+".spdx.json"), name, s.version, archive)
			if _, ok := sums[name+".spdx.json"]; !ok {
				t.Errorf("checksums.txt does not list %s.spdx.json", name)
			}
		})
	}
	t.Run("signature", func(t *testing.T) { checkSignature(t, s.dist) })
}

// checkChecksums verifies every line of checksums.txt and returns the
// files it lists.
func checkChecksums(t *testing.T, dist string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(mustRead(t, filepath.Join(dist, "checksums.txt"))))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("checksums.txt line %q is not `<sha256>  <file>`", sc.Text())
		}
		got := sha256.Sum256(mustRead(t, filepath.Join(dist, name)))
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: checksum %s, checksums.txt says %s", name, hex.EncodeToString(got[:]), sum)
		}
		sums[name] = sum
	}
	return sums
}

// checkArchive: the archive holds the binary, LICENSE and README.md; the
// binary is the Dockerfile build's for the platform, with the snapshot
// version; on this machine's platform it runs and prints it.
func checkArchive(t *testing.T, s snapshot, goos, goarch string, archive []byte) {
	files := e2eharness.Untar(t, archive)
	if names := slices.Sorted(maps.Keys(files)); !slices.Equal(names, []string{"LICENSE", "README.md", "rotate-certs"}) {
		t.Errorf("archive holds %v", names)
	}
	bin := files["rotate-certs"]
	info, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("not a Go binary: %v", err)
	}
	settings := map[string]string{}
	for _, kv := range info.Settings {
		settings[kv.Key] = kv.Value
	}
	if settings["GOOS"] != goos || settings["GOARCH"] != goarch || settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("go version -m: GOOS %s GOARCH %s CGO_ENABLED %s -trimpath %s; want %s/%s, 0, true",
			settings["GOOS"], settings["GOARCH"], settings["CGO_ENABLED"], settings["-trimpath"], goos, goarch)
	}
	// Go does not record -ldflags with -trimpath: the stamped version is
	// in the binary's data.
	if !bytes.Contains(bin, []byte("v"+s.version)) || !bytes.Contains(bin, []byte(s.commit)) {
		t.Errorf("the binary holds no version v%s and commit %s", s.version, s.commit)
	}
	docker := mustRead(t, e2eharness.DockerfileBuild(t, t.TempDir(), "v"+s.version, s.commit, goos, goarch))
	if !bytes.Equal(bin, docker) {
		t.Errorf("goreleaser's binary differs from the Dockerfile build line's")
	}
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		return
	}
	path := filepath.Join(t.TempDir(), "rotate-certs")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	r := e2eharness.Cmd{}.Run(t, path, "version")
	if want := "rotate-certs v" + s.version + " (commit " + s.commit + ")\n"; r.Stdout != want {
		t.Errorf("version printed %q, want %q (%v)", r.Stdout, want, r.Err)
	}
}

// checkSBOM: the SPDX project's own reader and validator accept the
// document, which describes the archive by its checksum and lists the
// module and its dependencies.
func checkSBOM(t *testing.T, path, archiveName, version string, archive []byte) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := spdxjson.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := spdxlib.ValidateDocument(doc); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	described, err := spdxlib.GetDescribedPackageIDs(doc)
	if err != nil || len(described) != 1 {
		t.Fatalf("described packages %v: %v", described, err)
	}
	sum := sha256.Sum256(archive)
	names := map[string]bool{}
	for _, p := range doc.Packages {
		names[p.PackageName] = true
		names[p.PackageName+"@"+p.PackageVersion] = true
		if p.PackageSPDXIdentifier == described[0] {
			if p.PackageName != archiveName || len(p.PackageChecksums) != 1 || p.PackageChecksums[0].Value != hex.EncodeToString(sum[:]) {
				t.Errorf("the described package %s %v is not the archive", p.PackageName, p.PackageChecksums)
			}
		}
	}
	for _, m := range []string{"github.com/rotate-certs/rotate-certs@v" + version, "sigs.k8s.io/kustomize/kyaml", "stdlib"} {
		if !names[m] && !names[m+"@"] {
			t.Errorf("%s lists no package %s", path, m)
		}
	}
}

// checkSignature: cosign verifies the signature over checksums.txt with
// the key's public half, and refuses a checksums file that was changed.
func checkSignature(t *testing.T, dist string) {
	cosign := e2eharness.Tool(t, "cosign")
	pub := filepath.Join(filepath.Dir(dist), "cosign.pub")
	verify := func(file string) e2eharness.Result {
		return e2eharness.Cmd{Dir: dist}.Run(t, cosign, "verify-blob", "--key", pub,
			"--bundle", "checksums.txt.sigstore.json", "--insecure-ignore-tlog=true", file)
	}
	if r := verify("checksums.txt"); r.Err != nil {
		t.Fatalf("cosign verify-blob: %v\n%s", r.Err, r.Stderr)
	}
	tampered := filepath.Join(t.TempDir(), "checksums.txt")
	if err := os.WriteFile(tampered, append(mustRead(t, filepath.Join(dist, "checksums.txt")), "0000  extra\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := verify(tampered); r.Err == nil {
		t.Errorf("cosign verify-blob accepted a changed checksums file")
	}
}
