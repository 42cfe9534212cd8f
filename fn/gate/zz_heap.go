package gate

import (
	"os"
	"runtime"
	"runtime/pprof"
)

func heapAt(name string) {
	p := os.Getenv("RC_HEAPPROFILE")
	if p == "" {
		return
	}
	runtime.GC()
	f, _ := os.Create(p + "." + name)
	pprof.WriteHeapProfile(f)
	f.Close()
}
