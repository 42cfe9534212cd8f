//go:build devtools

package main

import (
	"path"
	"strings"
)

// isManifest reports whether diff reads file as a manifest.
func isManifest(file string) bool {
	switch strings.ToLower(path.Ext(file)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// isCertFile reports whether file is named as certificate files are.
func isCertFile(file string) bool {
	switch strings.ToLower(path.Ext(file)) {
	case ".pem", ".crt", ".cer", ".key":
		return true
	}
	return false
}

// isHidden reports whether a file or one of its directories is hidden:
// diff skips those, as render and check do.
func isHidden(file string) bool {
	for _, part := range strings.Split(file, "/") {
		if strings.HasPrefix(part, ".") && part != ".krmignore" {
			return true
		}
	}
	return false
}

// isKustomization reports whether file is a kustomization.
func isKustomization(file string) bool {
	switch path.Base(file) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return true
	}
	return false
}

// kustomizeDirs is the set of directories that hold a kustomization at
// some commit of a history: every file under one may be a build's input
// (a generator's file or env file, a patch), since kustomize loads files
// from a kustomization's directory and below.
type kustomizeDirs map[string]bool

func newKustomizeDirs(commits []commit) kustomizeDirs {
	dirs := kustomizeDirs{}
	for _, c := range commits {
		for _, f := range c.Files {
			if isKustomization(f) {
				dirs[path.Dir(f)] = true
			}
		}
	}
	return dirs
}

// under reports whether file is in a kustomization's directory or below.
func (k kustomizeDirs) under(file string) bool {
	for dir := path.Dir(file); ; dir = path.Dir(dir) {
		if k[dir] {
			return true
		}
		if dir == "." || dir == "/" {
			return false
		}
	}
}

// buildReads reports whether a build reads file: a manifest, a
// certificate file, a .krmignore, or any file of a kustomization's
// directory - outside hidden directories, which diff does not read.
func (k kustomizeDirs) buildReads(file string) bool {
	if isHidden(file) {
		return false
	}
	return isManifest(file) || isCertFile(file) || path.Base(file) == ".krmignore" || k.under(file)
}

// touchesBuild reports whether a commit changes a file a build reads.
func (k kustomizeDirs) touchesBuild(c commit) bool {
	for _, f := range c.Files {
		if k.buildReads(f) {
			return true
		}
	}
	return false
}

// touchesCertFile reports whether a commit changes a certificate file.
func touchesCertFile(c commit) bool {
	for _, f := range c.Files {
		if isCertFile(f) && !isHidden(f) {
			return true
		}
	}
	return false
}
