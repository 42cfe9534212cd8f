package e2e

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/e2eharness"
)

// The release image, built by ko as `make image-oci` and a release do
// (e2eharness.BuildReleaseImage): an image index for linux/amd64 and
// linux/arm64 in an OCI layout and in a loopback registry, with SPDX
// SBOMs, holding the very binary the Dockerfile builds, signed and
// verified with cosign.

// ociLayout reads an OCI image layout's index.json and blobs.
type ociLayout string

type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Platform  struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
	} `json:"platform"`
}

type ociManifest struct {
	Manifests []ociDescriptor `json:"manifests"` // an index
	Config    ociDescriptor   `json:"config"`    // an image
	Layers    []ociDescriptor `json:"layers"`
}

func (l ociLayout) blob(t *testing.T, digest string) []byte {
	t.Helper()
	algo, encoded, _ := strings.Cut(digest, ":")
	data, err := os.ReadFile(filepath.Join(string(l), "blobs", algo, encoded))
	if err != nil {
		t.Fatal(err)
	}
	if got := e2eDigest(data); got != digest {
		t.Fatalf("blob %s has digest %s", digest, got)
	}
	return data
}

func (l ociLayout) manifest(t *testing.T, digest string) ociManifest {
	t.Helper()
	var m ociManifest
	if err := json.Unmarshal(l.blob(t, digest), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func e2eDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// imageBinaries returns, by architecture, the binary at /ko-app/rotate-certs
// of each image of the index digest in the layout.
func imageBinaries(t *testing.T, l ociLayout, index string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, d := range l.manifest(t, index).Manifests {
		m := l.manifest(t, d.Digest)
		var cfg struct {
			Architecture string `json:"architecture"`
			OS           string `json:"os"`
		}
		if err := json.Unmarshal(l.blob(t, m.Config.Digest), &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.Architecture != d.Platform.Architecture || cfg.OS != "linux" {
			t.Errorf("the index lists %s/%s for an image configured as %s/%s", d.Platform.OS, d.Platform.Architecture, cfg.OS, cfg.Architecture)
		}
		for _, layer := range m.Layers {
			if bin, ok := e2eharness.Untar(t, l.blob(t, layer.Digest))["ko-app/rotate-certs"]; ok {
				out[cfg.Architecture] = bin
			}
		}
	}
	return out
}

// TestReleaseImage: ko's image is what a release promises - both
// platforms, the Dockerfile's binary byte for byte, an SBOM beside it in
// the registry and on disk - and cosign signs and verifies it.
func TestReleaseImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the image; skipped with -short")
	}
	img := e2eharness.BuildReleaseImage(t)
	_, digest, _ := strings.Cut(img.Ref, "@")
	layout := ociLayout(img.Layout)
	var index ociManifest
	if err := json.Unmarshal(mustRead(t, filepath.Join(img.Layout, "index.json")), &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Manifests) != 1 || index.Manifests[0].Digest != digest {
		t.Fatalf("the layout's index.json lists %+v, not the pushed index %s", index.Manifests, digest)
	}
	t.Run("same binary as the Dockerfile", func(t *testing.T) { checkSameBinary(t, img, imageBinaries(t, layout, digest)) })
	t.Run("sbom", func(t *testing.T) { checkImageSBOM(t, img, digest) })
	t.Run("cosign", func(t *testing.T) { checkCosign(t, img) })
}

// checkSameBinary: for each platform, the image's binary is the one the
// Dockerfile's build line makes with the same version and commit; the
// amd64 one runs and says so.
func checkSameBinary(t *testing.T, img e2eharness.ReleaseImage, bins map[string][]byte) {
	if archs := slices.Sorted(maps.Keys(bins)); !slices.Equal(archs, []string{"amd64", "arm64"}) {
		t.Fatalf("binaries for %v, want amd64 and arm64", archs)
	}
	for arch, bin := range bins {
		docker := mustRead(t, e2eharness.DockerfileBuild(t, t.TempDir(), img.Version, img.Commit, "linux", arch))
		if !bytes.Equal(bin, docker) {
			t.Errorf("linux/%s: ko's binary differs from the Dockerfile's\n%s", arch, buildDiff(t, bin, docker))
		}
	}
	path := filepath.Join(t.TempDir(), "rotate-certs")
	if err := os.WriteFile(path, bins["amd64"], 0o755); err != nil {
		t.Fatal(err)
	}
	if r := (e2eharness.Cmd{}).Run(t, path, "version"); r.Stdout != "rotate-certs "+img.Version+" (commit "+img.Commit+")\n" {
		t.Errorf("version: %q %v", r.Stdout, r.Err)
	}
}

// buildDiff says how two Go binaries' build information differs.
func buildDiff(t *testing.T, a, b []byte) string {
	ia, errA := buildinfo.Read(bytes.NewReader(a))
	ib, errB := buildinfo.Read(bytes.NewReader(b))
	if errA != nil || errB != nil {
		return "build information unreadable"
	}
	if sa, sb := ia.String(), ib.String(); sa != sb {
		return "ko:\n" + sa + "\nDockerfile:\n" + sb
	}
	return "the same build information (go version -m): the difference is in the code"
}

// checkImageSBOM: ko wrote an SPDX document per image and for the index,
// naming the module and its dependencies, and pushed the index's SBOM to
// the registry beside the image (the tag cosign's tools look for).
func checkImageSBOM(t *testing.T, img e2eharness.ReleaseImage, digest string) {
	for _, name := range []string{"rotate-certs-linux-amd64.spdx.json", "rotate-certs-linux-arm64.spdx.json", "rotate-certs-index.spdx.json"} {
		var doc struct {
			SPDXVersion string `json:"spdxVersion"`
			Packages    []struct {
				Name string `json:"name"`
			} `json:"packages"`
		}
		if err := json.Unmarshal(mustRead(t, filepath.Join(img.SBOMDir, name)), &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var names []string
		for _, p := range doc.Packages {
			names = append(names, p.Name)
		}
		if !strings.HasPrefix(doc.SPDXVersion, "SPDX-2.") || len(names) == 0 {
			t.Errorf("%s: %s with packages %v", name, doc.SPDXVersion, names)
		}
		if strings.Contains(name, "linux") && (!slices.Contains(names, "github.com/rotate-certs/rotate-certs") || !slices.Contains(names, "sigs.k8s.io/kustomize/kyaml")) {
			t.Errorf("%s names %v: not the module and its dependencies", name, names)
		}
	}
	resp, err := http.Get("http://" + img.Registry + "/v2/rotate-certs/tags/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tags struct {
		Tags []string `json:"tags"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tags); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(digest, ":", "-", 1) + ".sbom"
	if !slices.Contains(tags.Tags, want) || !slices.Contains(tags.Tags, img.Version) {
		t.Errorf("registry tags %v, want %s and %s", tags.Tags, img.Version, want)
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

// checkCosign: a key pair made here signs the pushed image in the loopback
// registry (offline: no transparency log); cosign verify accepts it with
// the public key, and refuses it with another key and refuses an image
// nobody signed.
func checkCosign(t *testing.T, img e2eharness.ReleaseImage) {
	cosign := e2eharness.Tool(t, "cosign")
	dir := t.TempDir()
	env := append(os.Environ(), "COSIGN_PASSWORD=test-only", "COSIGN_YES=true")
	run := func(args ...string) e2eharness.Result {
		return e2eharness.Cmd{Dir: dir, Env: env, Ctx: t.Context()}.Run(t, cosign, args...)
	}
	for _, prefix := range []string{"release", "other"} {
		if r := run("generate-key-pair", "--output-key-prefix", prefix); r.Err != nil {
			t.Fatalf("generate-key-pair: %v\n%s", r.Err, r.Stderr)
		}
	}
	registry := []string{"--allow-http-registry", "--allow-insecure-registry"}
	sign := append([]string{"sign", "--key", "release.key", "--tlog-upload=false", "--use-signing-config=false"}, registry...)
	if r := run(append(sign, img.Ref)...); r.Err != nil {
		t.Fatalf("cosign sign: %v\n%s", r.Err, r.Stderr)
	}
	verify := func(key, ref string) e2eharness.Result {
		return run(append(append([]string{"verify", "--key", key, "--insecure-ignore-tlog=true"}, registry...), ref)...)
	}
	r := verify("release.pub", img.Ref)
	if r.Err != nil {
		t.Fatalf("cosign verify with the signing key's public half: %v\n%s", r.Err, r.Stderr)
	}
	if !strings.Contains(r.Stdout, strings.TrimPrefix(img.Ref, img.Repo+"@")) {
		t.Errorf("cosign verify printed no payload naming the digest:\n%s", r.Stdout)
	}
	if r := verify("other.pub", img.Ref); r.Err == nil {
		t.Errorf("cosign verify accepted another key's public half:\n%s", r.Stdout)
	}
	if r := verify("release.pub", img.Registry+"/distroless/static:nonroot"); r.Err == nil {
		t.Errorf("cosign verify accepted an image nobody signed:\n%s", r.Stdout)
	}
}
