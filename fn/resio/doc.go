// Package resio reads and writes resources - the one I/O path of every
// rotate-certs command. It reads them from where they are:
//
//   - a ResourceList on stdin (readList, RunList: function mode), on a fast
//     path for the layout kustomize and kpt write (split.go, item.go,
//     parse.go) and through kyaml's reader for any other;
//   - a package tree (ReadTree; ScanTree and Tree.Read for render, a
//     package at a time), walked by the one set of rules for which files
//     are manifests (Walk) and split into packages by their policies
//     (Split);
//   - the files and stdin a command line names (ReadPaths: check, init,
//     snapshot), Lists and ResourceLists unwrapped;
//   - the documents Helm pipes to a post-renderer (ReadDocuments);
//
// into one type, Resources, and writes back what a function made of them
// (writeList, WriteFiles, WriteDocuments) the same way: what did not
// change is copied as it was read, what changed is spliced into its text
// (splice.go: only the pairs the function replaced or added are encoded),
// and what is new is encoded - into a list, or into files replaced all or
// nothing (atomicfs.ReplaceFiles). One fingerprint (fingerprinter) tells changed
// from unchanged everywhere. The equivalence tests hold every reader and
// writer to kyaml's, byte for byte where kyaml's output is the contract.
//
// It also owns what function mode accepts on stdin (MaxInputBytes,
// InputHint) and the text-level checks every reader shares (duplicateKeys).
package resio
