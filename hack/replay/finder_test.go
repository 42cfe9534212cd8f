//go:build devtools

package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

var (
	notBefore = testpki.Date(2026, 1, 1)
	caOld     = testpki.NewCA("replay-old", notBefore, testpki.Days(365))
	caNew     = testpki.NewCA("replay-new", notBefore, testpki.Days(365))
	inter     = testpki.NewIntermediate("replay-inter", "", caOld, notBefore, testpki.Days(365))
	leaf      = testpki.NewLeaf("replay-leaf", caOld, notBefore, testpki.Days(30))
)

func sha(c testpki.Cert) string {
	sum := sha256.Sum256(c.Cert.Raw)
	return hex.EncodeToString(sum[:])
}

func b64(certs ...testpki.Cert) string {
	var b []byte
	for _, c := range certs {
		b = append(b, c.PEM()...)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func indented(c testpki.Cert, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSpace(string(c.PEM())), "\n", "\n"+pad)
}

// tree is one commit's files of the test repository, for a CA: trust in
// every kind of place the finder knows, and values that are not trust.
func tree(ca testpki.Cert) map[string]string {
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    certificate-authority-data: " + b64(ca) + "\n"
	return map[string]string{
		"app/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: ca, namespace: app}\ndata:\n  ca.crt: " + b64(ca) +
			"\n  tls.crt: " + b64(ca) + "\n  chain.pem: " + b64(inter, caOld) + "\n  mixed.pem: " + b64(leaf, caOld) + "\n" +
			"  kubeconfig: " + base64.StdEncoding.EncodeToString([]byte(kubeconfig)) + "\n",
		"app/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: app}\nspec:\n  template:\n    spec:\n      containers:\n" +
			"      - name: proxy\n        env:\n        - name: TRUST_ANCHORS\n          value: |\n" + indented(ca, 12) + "\n",
		"base/kustomization.yaml": "secretGenerator:\n- name: roots\n  files: [certs/root.pem]\n",
		"base/certs/root.pem":     string(ca.PEM()),
		"charts/values.yaml":      "identityTrustAnchorsPEM: |\n" + indented(ca, 2) + "\n",
		".github/ca.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hidden}\ndata:\n  ca.crt: " + b64(ca) + "\n",
		"README.md":               "no trust here\n",
		"app/api.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: app, labels: {ca: " + ca.Cert.Subject.CommonName +
			"}}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers: [{name: api, image: api:1}]\n",
		"app/dup-1.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: dup, labels: {ca: " + ca.Cert.Subject.CommonName +
			"}}\nspec:\n  template:\n    spec:\n      containers: [{name: dup, image: dup:1}]\n",
		"app/dup-2.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: dup}\nspec:\n  template:\n    spec:\n      containers: [{name: dup, image: dup:2}]\n",
	}
}

// gitRepo builds a repository of two commits, the second replacing caOld
// by caNew everywhere, and returns it with the two hashes.
func gitRepo(t *testing.T) (dir, first, second string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir = t.TempDir()
	gitT(t, dir, "init", "-q")
	for i, ca := range []testpki.Cert{caOld, caNew} {
		for name, content := range tree(ca) {
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", "-q", "-m", "commit "+strconv.Itoa(i+1))
	}
	hashes := strings.Fields(gitT(t, dir, "log", "--format=%H"))
	return dir, hashes[1], hashes[0]
}

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z", "GIT_AUTHOR_DATE=2026-01-02T03:04:05Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

func TestFinderOverGitHistory(t *testing.T) {
	dir, first, second := gitRepo(t)
	commits, err := listCommits(dir, second)
	if err != nil {
		t.Fatal(err)
	}
	if len(commits) != 2 || commits[0].Hash != second || commits[0].Parent != first || commits[1].Parent != "" {
		t.Fatalf("listCommits: %+v", commits)
	}
	if commits[0].When.Format("2006-01-02T15:04:05Z07:00") != "2026-01-02T03:04:05Z" || len(commits[1].Files) != len(tree(caOld)) {
		t.Fatalf("listCommits: date %s, root files %v", commits[0].When, commits[1].Files)
	}
	b, err := newBlobReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	changes, err := changedFiles(dir, first, second)
	if err != nil {
		t.Fatal(err)
	}
	found, err := findChanges(b, changes, newKustomizeDirs(commits))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range found.Deltas {
		if len(d.Added) != 1 || d.Added[0] != sha(caNew) || len(d.Removed) != 1 || d.Removed[0] != sha(caOld) {
			t.Errorf("%+v: want caOld replaced by caNew", d.at())
		}
		got = append(got, d.at().Kind+": "+d.at().File+" "+d.at().Doc+" "+d.at().Path)
	}
	sort.Strings(got)
	want := []string{
		kindData + ": app/secret.yaml Secret app/ca data.ca.crt",
		kindKubeconfig + ": app/secret.yaml Secret app/ca data.kubeconfig|clusters[c].cluster.certificate-authority-data",
		kindKustomizeInput + ": base/certs/root.pem  ",
		kindEnv + ": app/deploy.yaml Deployment.apps app/web spec.template.spec.containers[proxy].env[TRUST_ANCHORS].value",
		kindNoKind + ": charts/values.yaml document 1 identityTrustAnchorsPEM",
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("trust changes the finder sees:\n%s\nwant (tls.crt, a chain, a leaf beside a CA and hidden files are no trust):\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestTrustValue(t *testing.T) {
	der := base64.StdEncoding.EncodeToString(caOld.Cert.Raw)
	cases := []struct {
		name, value, key string
		want             []string
	}{
		{"PEM with text around", "# the root\n" + string(caOld.PEM()) + "trailing", "ca.crt", []string{sha(caOld)}},
		{"two roots", string(caOld.PEM()) + string(caNew.PEM()), "ca.crt", []string{sha(caNew), sha(caOld)}},
		{"base64 of DER", der, "ca.der", []string{sha(caOld)}},
		{"a certificate's own key", string(caOld.PEM()), "tls.crt", nil},
		{"a leaf", string(leaf.PEM()), "ca.crt", nil},
		{"a chain", string(inter.PEM()) + string(caOld.PEM()), "ca.crt", nil},
		{"an intermediate alone", string(inter.PEM()), "ca.crt", []string{sha(inter)}},
		{"a key beside the CA", string(caOld.PEM()) + string(caOld.KeyPEM()), "ca.crt", nil},
		{"short base64", "aGVsbG8=", "x", nil},
	}
	for _, c := range cases {
		cas, ok := trustValue(c.value, c.key)
		var got []string
		for s := range cas {
			got = append(got, s)
		}
		sort.Strings(got)
		sort.Strings(c.want)
		if ok != (c.want != nil) || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: got %v %v, want %v", c.name, ok, got, c.want)
		}
	}
}

// TestMovedWithinDirectory: an object moved to another file of its
// directory keeps its identity, as diff's; moved to another directory it
// is a removal and an addition.
func TestMovedWithinDirectory(t *testing.T) {
	secret := []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: ca}\ndata:\n  ca.crt: " + b64(caOld) + "\n")
	for _, c := range []struct {
		to   string
		want int
	}{{"app/moved.yaml", 0}, {"other/ca.yaml", 2}} {
		var base, head side
		old, _ := findTrust("app/ca.yaml", secret)
		cur, _ := findTrust(c.to, secret)
		base.add(old)
		head.add(cur)
		if got := trustDeltas(base, head); len(got) != c.want {
			t.Errorf("moved to %s: want %d changes, got %+v", c.to, c.want, got)
		}
	}
}

// TestIndependentOfRotateCerts: the harness checks diff against its own
// finder, so it imports nothing of rotate-certs (tests may use its test
// fixtures).
func TestIndependentOfRotateCerts(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			if strings.Contains(imp.Path.Value, "github.com/rotate-certs/rotate-certs") {
				t.Errorf("%s imports %s: the replay must not share rotate-certs' code", f, imp.Path.Value)
			}
		}
	}
}

// TestDuplicatesToldApartByFile: a workload several files of a directory
// define (linkerd2's cli/cmd/testdata/inject_emojivoto_*.golden.yml, at
// 009a25fa3288) is told apart by its file on both sides, as diff tells
// duplicates apart: when one copy moves its anchor from containers to
// initContainers, the copy that had it there already changes nothing
// (before, the first file in order took the bare identity at each side and
// the unchanged copy was "added").
func TestDuplicatesToldApartByFile(t *testing.T) {
	web := func(list string) []byte {
		return []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: emojivoto}\nspec:\n  template:\n    spec:\n" +
			"      " + list + ":\n      - name: linkerd-proxy\n        env:\n        - name: LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS\n" +
			"          value: |\n" + indented(caOld, 12) + "\n")
	}
	var base, head side
	for _, f := range []struct {
		file      string
		was, then string
	}{{"testdata/inject_web.golden.yml", "containers", "initContainers"}, {"testdata/inject_web_native.golden.yml", "initContainers", "initContainers"}} {
		old, _ := findTrust(f.file, web(f.was))
		cur, _ := findTrust(f.file, web(f.then))
		base.add(old)
		head.add(cur)
	}
	got := trustDeltas(base, head)
	if len(got) != 2 {
		t.Fatalf("want the moved copy's anchor removed from containers and added to initContainers, got %+v", got)
	}
	for _, d := range got {
		if d.at().File != "testdata/inject_web.golden.yml" {
			t.Errorf("a change of the copy that did not move: %+v", d)
		}
	}
}
