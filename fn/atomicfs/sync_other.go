//go:build !linux

package atomicfs

import "os"

// flushTemp flushes t's temporary file f (fsync) as it is written, where
// there is no syncfs(2).
func flushTemp(f *os.File, _ *target) error { return f.Sync() }

// syncTemps has nothing left to do: flushTemp flushed every file.
func syncTemps([]*target) error { return nil }
