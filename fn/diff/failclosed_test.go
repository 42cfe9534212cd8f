package diff

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/exit"
	"github.com/rotate-certs/rotate-certs/fn/trustdiff"
)

// A gate that compares nothing passes every change: a PATH on neither
// side, or a HEAD revision mistyped (taken for a PATH), is a usage error
// naming it, and nothing is written to stdout.
func TestPathOnNeitherSideFailsClosed(t *testing.T) {
	r := newRepo(t)
	tree := gatewayTree(caOld, leafOld, caOld)
	tree["docs/README.md"] = "no manifest here\n"
	base := r.commit(tree)
	head := r.commit(map[string]string{"gw/trust.yaml": secret(egNS, "envoy-gateway-trust", map[string]string{"ca.crt": pem(attacker)})})
	cases := []struct {
		name  string
		head  string // "" is the working tree
		paths []string
		want  exit.Code
		msg   string
	}{
		{"typo in PATH", head, []string{"gww"}, exit.Usage, `PATH gww is neither in BASE "` + base + `" nor in HEAD "` + head + `"`},
		{"typo beside a good PATH", head, []string{"gw", "clusters/prod"}, exit.Usage, "PATH clusters/prod is neither"},
		{"unknown HEAD revision", "", []string{"mian"}, exit.Usage, `"mian" is neither a revision of the repository nor a path in BASE`},
		{"PATH that holds no manifest", head, []string{"docs"}, exit.OK, ""},
		{"PATH of a file", head, []string{"gw/trust.yaml"}, exit.Failed, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := r.diffPaths(base, tc.head, tc.paths)
			if code != tc.want {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.want, out, stderr)
			}
			if tc.msg != "" && !strings.Contains(stderr, tc.msg) {
				t.Errorf("stderr %q, want %q", stderr, tc.msg)
			}
			if code == exit.Usage && out != "" {
				t.Errorf("a usage error wrote to stdout:\n%s", out)
			}
		})
	}
}

// A PATH that only one side has is a change (a directory added or
// removed), not a typo.
func TestPathOnOneSideIsRead(t *testing.T) {
	r := newRepo(t)
	base := r.commit(map[string]string{"a/x.yaml": configMap("a", "x", map[string]string{"k": "v"})})
	head := r.commit(gatewayTree(caOld, leafOld, caOld))
	res, code := r.resultPaths(base, head, []string{"gw"})
	if code == exit.Usage || len(res.Trust) == 0 {
		t.Fatalf("exit %d, trust %v: want the added directory's trust", code, res.Trust)
	}
	if res, code := r.resultPaths(head, base, []string{"gw"}); code != exit.OK || len(res.Trust) == 0 || len(res.Trust[0].Removed) == 0 {
		t.Fatalf("removing the directory: exit %d, trust %v: want its trust removed", code, res.Trust)
	}
}

// unreadable are files kyaml's reader refuses, as real repositories hold
// them: a JSONC tsconfig, a manifest with a key defined twice, a
// deliberately bad test fixture.
var unreadable = map[string]string{
	"web/tsconfig.json":     "{\n  // comments are JSONC, not JSON\n  \"compilerOptions\": {\"strict\": true,},\n}\n",
	"fixtures/dupkey.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  name: y\n",
	"fixtures/invalid.yaml": "apiVersion: v1\nkind: ConfigMap\n  data: [\n",
}

// A file unreadable at BASE and HEAD alike, unchanged, does not block
// every pull request: the verdict on the rest stands, a warning names it
// and the JSON lists it (incomplete).
func TestUnreadableOnBothSidesIsIncomplete(t *testing.T) {
	r := newRepo(t)
	tree := gatewayTree(caOld, leafOld, caOld)
	for f, text := range unreadable {
		tree[f] = text
	}
	base := r.commit(tree)
	head := r.commit(map[string]string{"gw/gateway-ca.yaml": gatewayTree(caNew, leafNew)["gw/gateway-ca.yaml"]})
	out, stderr, code := r.diff(base, head, "json", false)
	if code != exit.Failed {
		t.Fatalf("exit %d, want %d (the certgen break stands)\n%s", code, exit.Failed, stderr)
	}
	var res trustdiff.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, i := range res.Incomplete {
		files = append(files, i.File)
		if !strings.Contains(stderr, i.Reason) {
			t.Errorf("stderr does not warn of %s:\n%s", i.File, stderr)
		}
	}
	if len(files) != len(unreadable) {
		t.Fatalf("incomplete %v, want the %d unreadable files", files, len(unreadable))
	}
	table, _, _ := r.diff(base, head, "table", false)
	if !strings.Contains(table, "3 unchanged file(s) not read") || !strings.Contains(table, "fixtures/dupkey.yaml") {
		t.Errorf("the table does not say what it did not read:\n%s", table)
	}
	if _, _, code := r.diff(base, base, "json", false); code != exit.OK {
		t.Errorf("diff of a commit with itself: exit %d, want 0", code)
	}
}

// A file the change makes unreadable, or changes while it stays
// unreadable, is exit 2 naming it, with nothing on stdout: what it holds
// at HEAD is not known.
func TestUnreadableByTheChangeFailsClosed(t *testing.T) {
	cases := []struct {
		name       string
		base, head string
	}{
		{"made unreadable", secret(egNS, "extra", map[string]string{"ca.crt": pem(caOld)}), unreadable["fixtures/dupkey.yaml"]},
		{"changed while unreadable", unreadable["fixtures/dupkey.yaml"], unreadable["fixtures/dupkey.yaml"] + "data: {k: v}\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			tree := gatewayTree(caOld, leafOld, caOld)
			tree["gw/extra.yaml"] = tc.base
			base := r.commit(tree)
			head := r.commit(map[string]string{"gw/extra.yaml": tc.head})
			out, stderr, code := r.diff(base, head, "table", false)
			if code != exit.Usage || out != "" {
				t.Fatalf("exit %d, stdout %q: want %d and nothing\n%s", code, out, exit.Usage, stderr)
			}
			if !strings.Contains(stderr, "at HEAD: ") || !strings.Contains(stderr, "gw/extra.yaml") {
				t.Errorf("stderr does not name the file:\n%s", stderr)
			}
		})
	}
}

// A kustomization whose build fails at BASE and HEAD alike with an
// unchanged kustomization file is still fatal when a file the build read
// changed: a generator's input replaced under a build that cannot finish
// is a change diff cannot see.
func TestFailedBuildWithAChangedInputFailsClosed(t *testing.T) {
	kustomization := "secretGenerator:\n- name: cacerts\n  namespace: istio-system\n  files:\n  - root-cert.pem\n  - missing.pem\n"
	r := newRepo(t)
	base := r.commit(map[string]string{"ca/kustomization.yaml": kustomization, "ca/root-cert.pem": pem(caOld)})
	same := r.commit(map[string]string{"README.md": "unrelated\n"})
	if _, stderr, code := r.diff(base, same, "table", false); code != exit.OK || !strings.Contains(stderr, "ca/kustomization.yaml") {
		t.Fatalf("a build failing alike on both sides, nothing it read changed: exit %d, want 0 and a warning\n%s", code, stderr)
	}
	head := r.commit(map[string]string{"ca/root-cert.pem": pem(caNew)})
	out, stderr, code := r.diff(same, head, "table", false)
	if code != exit.Usage || out != "" || !strings.Contains(stderr, "at HEAD: ") {
		t.Fatalf("exit %d, stdout %q: want %d and nothing\n%s", code, out, exit.Usage, stderr)
	}
	// The kustomization is unchanged: the reviewer is told which input the
	// change altered, and how to go on.
	want := "at HEAD: ca/kustomization.yaml: its build reads ca/root-cert.pem, changed in this change; fix the build, or leave its directory out (.krmignore)"
	if !strings.Contains(stderr, want) {
		t.Fatalf("want %q in\n%s", want, stderr)
	}
}

// A side whose blobs git cannot give (a missing object: a damaged or
// partial clone) is read when diff reads that side: it fails closed as a
// usage error naming the side and the file, with nothing on stdout - never
// a side read short.
func TestSideGitCannotReadFailsClosed(t *testing.T) {
	r := newRepo(t)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n"
	base := r.commit(map[string]string{"p/a.yaml": cm})
	head := r.commit(map[string]string{"p/b.yaml": strings.ReplaceAll(cm, "name: a", "name: b")})
	id := r.git("rev-parse", head+":p/b.yaml")
	if err := os.Remove(filepath.Join(r.dir, ".git", "objects", id[:2], id[2:])); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := r.diff(base, head, "table", false)
	if code != exit.Usage || out != "" {
		t.Fatalf("exit %d, want %d, stdout %q\nstderr %s", code, exit.Usage, out, stderr)
	}
	if want := `"` + head + `": reading p/b.yaml from git`; !strings.Contains(stderr, want) {
		t.Fatalf("stderr %q, want it to say %q", stderr, want)
	}
}
