//go:build devtools

package main

import (
	"testing"
	"time"
)

func TestRolledTemplate(t *testing.T) {
	dir, first, second := gitRepo(t)
	b, err := newBlobReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	cases := []struct {
		name string
		r    resource
		want templateVerdict
	}{
		{"its env changed", resource{Kind: "Deployment", Namespace: "app", Name: "web", File: "app/deploy.yaml"}, templateChanged},
		{"only its labels and replicas' neighbours changed", resource{Kind: "Deployment", Namespace: "app", Name: "api", File: "app/api.yaml"}, templateSame},
		{"held twice in its directory", resource{Kind: "Deployment", Name: "dup", File: "app/dup-1.yaml"}, templateSameCopies},
		{"not in its file", resource{Kind: "Deployment", Name: "built", File: "base/kustomization.yaml"}, templateUnchecked},
		{"another namespace", resource{Kind: "Deployment", Namespace: "other", Name: "api", File: "app/api.yaml"}, templateUnchecked},
	}
	held := newCopies(b, dir, second)
	for _, c := range cases {
		if got := rolledTemplate(b, dir, first, second, c.r, held); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
	// a workload new in the commit, and one moved to another file of its directory
	if got := compareTemplates([]string{`{"spec":{}}`}, nil); got != templateChanged {
		t.Errorf("a new workload: got %d", got)
	}
	moved := resource{Kind: "Deployment", Namespace: "app", Name: "api", File: "app/renamed.yaml"}
	content, _, _ := b.read(second + ":app/api.yaml")
	base := podTemplates(content, moved)
	if got := compareTemplates(podTemplates(content, moved), base); got != templateSame {
		t.Errorf("the same template: got %d", got)
	}
}

// TestListItems: the workloads of a List are read as objects, for the
// templates as for the finder.
func TestListItems(t *testing.T) {
	list := []byte("apiVersion: v1\nkind: List\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: web, namespace: emojivoto}\n" +
		"  spec:\n    template:\n      spec:\n        containers: [{name: web, image: web:1}]\n" +
		"- apiVersion: v1\n  kind: Secret\n  metadata: {name: ca, namespace: emojivoto}\n  data:\n    ca.crt: " + b64(caOld) + "\n")
	if got := podTemplates(list, resource{Kind: "Deployment", Namespace: "emojivoto", Name: "web"}); len(got) != 1 || got[0] == "" {
		t.Fatalf("the template of a List's Deployment: %q", got)
	}
	found, err := findTrust("app/list.yaml", list)
	if err != nil || len(found) != 1 {
		t.Fatalf("the trust of a List's Secret: %v %v", found, err)
	}
	for p := range found {
		if p.Kind != kindData || p.Doc != "Secret emojivoto/ca" || p.Path != "data.ca.crt" {
			t.Fatalf("the trust of a List's Secret: %+v", p)
		}
	}
}

func TestSelectCommits(t *testing.T) {
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	all := []commit{
		{Hash: "e", Files: []string{"main.go"}, When: day},
		{Hash: "d", Files: []string{"deploy/app.yaml"}, When: day},
		{Hash: "c", Files: []string{".github/workflows/ci.yaml"}, When: day},
		{Hash: "b", Files: []string{"overlay/env.properties"}, When: day},
		{Hash: "a", Files: []string{"overlay/kustomization.yaml", "certs/ca.pem"}, When: day},
	}
	k := newKustomizeDirs(all)
	hashes := func(cs []commit) (s string) {
		for _, c := range cs {
			s += c.Hash
		}
		return s
	}
	if got, every := selectCommits(all, k, 5, 0); hashes(got) != "edcba" || !every {
		t.Errorf("a short history: got %s %v, want every commit", hashes(got), every)
	}
	if got, _ := selectCommits(all, k, 4, 0); hashes(got) != "dba" {
		t.Errorf("a long history: got %s, want the commits a build reads (a hidden file is read by none, a kustomization's input is)", hashes(got))
	}
	if got, _ := selectCommits(all, k, 4, 1); hashes(got) != "da" {
		t.Errorf("capped at 1: got %s, want the newest and the one that changes a certificate file", hashes(got))
	}
}
