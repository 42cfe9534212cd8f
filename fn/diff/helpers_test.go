package diff

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/pki"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// testRepo is a git repository made for one test.
type testRepo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *testRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := &testRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	r.git("config", "user.email", "test@example.com")
	r.git("config", "user.name", "test")
	r.git("config", "commit.gpgsign", "false")
	return r
}

func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files (an empty value removes the file), commits them and
// returns the commit.
func (r *testRepo) commit(files map[string]string) string {
	r.t.Helper()
	for name, text := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if text == "" {
			_ = os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", "change")
	return r.git("rev-parse", "HEAD")
}

// diff runs the diff of base and head in the repository in format and
// returns stdout, stderr and the exit status.
func (r *testRepo) diff(base, head, format string, allow bool) (string, string, exit.Code) {
	var out, errb bytes.Buffer
	o := Options{Base: Side{Rev: base}, Head: Side{Rev: head}, Dir: r.dir, Now: testpki.GoldenNow, Format: format, AllowUnexplained: allow}
	if head == "" {
		o.Head = Side{Dir: "."}
	}
	log := exit.NewPrinter(&errb, "rotate-certs diff")
	err := Run(o, &out, log)
	log.Error(err)
	return out.String(), errb.String(), exit.CodeOf(err)
}

// diffPaths runs the diff of base and head (the working tree for "")
// limited to paths, as a table.
func (r *testRepo) diffPaths(base, head string, paths []string) (string, string, exit.Code) {
	var out, errb bytes.Buffer
	o := Options{Base: Side{Rev: base}, Head: Side{Rev: head}, Paths: paths, Dir: r.dir, Now: testpki.GoldenNow, Format: "table"}
	if head == "" {
		o.Head = Side{Dir: "."}
	}
	log := exit.NewPrinter(&errb, "rotate-certs diff")
	err := Run(o, &out, log)
	log.Error(err)
	return out.String(), errb.String(), exit.CodeOf(err)
}

// resultPaths is result limited to paths.
func (r *testRepo) resultPaths(base, head string, paths []string) (trustdiff.Result, exit.Code) {
	r.t.Helper()
	var out, errb bytes.Buffer
	o := Options{Base: Side{Rev: base}, Head: Side{Rev: head}, Paths: paths, Dir: r.dir, Now: testpki.GoldenNow, Format: "json"}
	err := Run(o, &out, exit.NewPrinter(&errb, "rotate-certs diff"))
	var res trustdiff.Result
	if jerr := json.Unmarshal(out.Bytes(), &res); jerr != nil {
		r.t.Fatalf("decoding %q: %v (stderr %s)", out.String(), jerr, errb.String())
	}
	return res, exit.CodeOf(err)
}

// result runs the diff as JSON and decodes it.
func (r *testRepo) result(base, head string) (trustdiff.Result, exit.Code) {
	r.t.Helper()
	out, stderr, code := r.diff(base, head, "json", false)
	var res trustdiff.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		r.t.Fatalf("decoding %q: %v (stderr %s)", out, err, stderr)
	}
	return res, code
}

// pem joins the PEM of certs.
func pem(certs ...testpki.Cert) string {
	var b strings.Builder
	for _, c := range certs {
		b.Write(c.PEM())
	}
	return b.String()
}

// b64 is base64 of s.
func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// secret is a Secret manifest with base64 data, keys sorted.
func secret(ns, name string, data map[string]string, annotations ...string) string {
	return object("v1", "Secret", ns, name, annotations) + "type: Opaque\ndata:\n" + dataLines(data, b64)
}

// configMap is a ConfigMap manifest.
func configMap(ns, name string, data map[string]string, annotations ...string) string {
	return object("v1", "ConfigMap", ns, name, annotations) + "data:\n" + dataLines(data, func(s string) string { return fmt.Sprintf("%q", s) })
}

func object(apiVersion, kind, ns, name string, annotations []string) string {
	s := fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n", apiVersion, kind, name)
	if ns != "" {
		s += "  namespace: " + ns + "\n"
	}
	if len(annotations) > 0 {
		s += "  annotations:\n"
		for i := 0; i+1 < len(annotations); i += 2 {
			s += fmt.Sprintf("    %s: %q\n", annotations[i], annotations[i+1])
		}
	}
	return s
}

func dataLines(data map[string]string, enc func(string) string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %s\n", k, enc(data[k]))
	}
	return b.String()
}

// deployment is a Deployment that reads kind/name through how: "volume",
// "subPath" (key ca.crt) or "env" (key key).
func deployment(ns, name, kind, obj, how, key string, annotations ...string) string {
	ref := "secret:\n          secretName: " + obj
	envRef := "secretKeyRef"
	if kind == "ConfigMap" {
		ref, envRef = "configMap:\n          name: "+obj, "configMapKeyRef"
	}
	mount := "        volumeMounts:\n        - name: trust\n          mountPath: /trust\n"
	if how == "subPath" {
		mount = "        volumeMounts:\n        - name: trust\n          mountPath: /trust/" + key + "\n          subPath: " + key + "\n"
	}
	spec := mount
	if how == "env" {
		spec = fmt.Sprintf("        env:\n        - name: TRUST\n          valueFrom:\n            %s:\n              name: %s\n              key: %s\n", envRef, obj, key)
	}
	s := object("apps/v1", "Deployment", ns, name, annotations)
	s += "spec:\n  selector:\n    matchLabels: {app: " + name + "}\n  template:\n    metadata:\n      labels: {app: " + name + "}\n    spec:\n      containers:\n      - name: main\n        image: example/app\n" + spec
	if how != "env" {
		s += "      volumes:\n      - name: trust\n        " + ref + "\n"
	}
	return s
}

// docs joins manifests into one file.
func docs(ms ...string) string { return strings.Join(ms, "---\n") }

// shaOf returns the SHA-256 of c in hex.
func shaOf(c testpki.Cert) string { return pki.FingerprintOf(c.Cert).String() }
