package e2eharness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// OCI media types of what PushBase writes.
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType string            `json:"mediaType"`
	Digest    string            `json:"digest"`
	Size      int               `json:"size"`
	Platform  map[string]string `json:"platform,omitempty"`
}

// PushBase pushes to the registry at hostport, as repo:tag, the stand-in
// for the release image's base (distroless static, nonroot), which no test
// machine can pull: an image index for linux/amd64 and linux/arm64 whose
// images hold one layer, distroless's /etc/passwd (BaseUsers) and
// /etc/group, and run as its nonroot user (65532). It is written with the
// OCI distribution API directly: no tool here builds an image for another
// architecture without running it.
func PushBase(t testing.TB, hostport, repo, tag string) {
	t.Helper()
	layer, diffID := baseLayer(t)
	layerDesc := pushBlob(t, hostport, repo, mediaLayer, layer)
	var index struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Manifests     []descriptor `json:"manifests"`
	}
	index.SchemaVersion, index.MediaType = 2, mediaIndex
	for _, arch := range []string{"amd64", "arm64"} {
		config := mustJSON(t, map[string]any{
			"architecture": arch, "os": "linux",
			"config": map[string]any{"User": "65532:65532", "Env": []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}},
			"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}},
		})
		manifest := mustJSON(t, map[string]any{
			"schemaVersion": 2, "mediaType": mediaManifest,
			"config": pushBlob(t, hostport, repo, mediaConfig, config),
			"layers": []descriptor{layerDesc},
		})
		d := putManifest(t, hostport, repo, digestOf(manifest), mediaManifest, manifest)
		d.Platform = map[string]string{"architecture": arch, "os": "linux"}
		index.Manifests = append(index.Manifests, d)
	}
	putManifest(t, hostport, repo, tag, mediaIndex, mustJSON(t, index))
}

// baseLayer returns the gzipped layer of the base and its diff ID.
func baseLayer(t testing.TB) (layer []byte, diffID string) {
	t.Helper()
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, f := range []struct{ name, content string }{
		{"etc/passwd", BaseUsers},
		{"etc/group", "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return gz.Bytes(), digestOf(raw.Bytes())
}

func digestOf(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pushBlob uploads a blob (a monolithic upload: POST, then PUT with the
// digest) and returns its descriptor.
func pushBlob(t testing.TB, hostport, repo, mediaType string, data []byte) descriptor {
	t.Helper()
	d := descriptor{MediaType: mediaType, Digest: digestOf(data), Size: len(data)}
	start, err := http.Post("http://"+hostport+"/v2/"+repo+"/blobs/uploads/", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	start.Body.Close()
	loc, err := start.Location()
	if err != nil {
		t.Fatalf("starting a blob upload to %s: %s: %v", repo, start.Status, err)
	}
	q := loc.Query()
	q.Set("digest", d.Digest)
	loc.RawQuery = q.Encode()
	send(t, http.MethodPut, loc.String(), "application/octet-stream", data, http.StatusCreated)
	return d
}

// putManifest puts a manifest or index under ref (a tag or its digest).
func putManifest(t testing.TB, hostport, repo, ref, mediaType string, data []byte) descriptor {
	t.Helper()
	send(t, http.MethodPut, "http://"+hostport+"/v2/"+repo+"/manifests/"+ref, mediaType, data, http.StatusCreated)
	return descriptor{MediaType: mediaType, Digest: digestOf(data), Size: len(data)}
}

func send(t testing.TB, method, url, contentType string, body []byte, want int) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %s", method, url, resp.Status)
	}
}
