// Package docs tests the project's documentation as code: every relative
// link in README.md, docs/ and the examples' READMEs resolves to a file
// (and heading) of the repository, and no document or source file cites
// anything that is not in the repository.
package docs
