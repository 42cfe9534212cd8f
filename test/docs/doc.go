// Package docs tests the project's documentation as code: every relative
// link in README.md, docs/ and the examples' READMEs resolves to a file
// (and heading) of the repository, no document cites anything that is not
// in the repository, every shell block of the README, the guides, the
// reference and the examples' READMEs runs on a private copy of the
// repository and leaves it unchanged, and every transcript marked as
// such (make sim, check) is what its command prints now, and every test the
// threat model of docs/design/state-in-git.md names exists.
package docs
