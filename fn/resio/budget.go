package resio

import (
	"fmt"
	"github.com/rotate-certs/rotate-certs/fn/kube"
	"math"
	"os"
	"runtime/debug"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Memory. The fast path holds the input, a few bytes per item, and the
// nodes of the items the function reads: each yaml.Node is 152 bytes,
// with its place in its parent's list about 168, where the text it comes
// from is typically 15 to 25 bytes per node. What it keeps is bounded by a
// budget proportional to the input (parseBudget), checked before each item
// is parsed against an upper bound of its nodes counted on its text
// (estimateNodes); a list that would go past it is refused with an error
// instead of growing without bound. Items parsed only to learn that the
// function does not read them are dropped again at once.
const (
	// nodeBytes is what one kept node costs.
	nodeBytes = 168
	// keptPerInputByte is how many bytes of nodes the fast path keeps at
	// most per byte of input.
	keptPerInputByte = 24
	// keptFloor is what it may keep of any list, however small.
	keptFloor = 32 << 20
)

// parseBudget is the number of nodes the fast path keeps at most for an
// input of size bytes.
func parseBudget(size int) int {
	return (keptPerInputByte*size + keptFloor) / nodeBytes
}

// estimateNodes returns an upper bound of the nodes YAML makes of raw:
// every node but a document's first is introduced by a key or entry
// indicator (":", "-", "?", ","), opens a flow collection ("[", "{"), or
// starts a line; each indicator introduces at most two.
func estimateNodes(raw []byte) int {
	n := 8
	for _, c := range raw {
		switch c {
		case ':', '-', '?', ',', '[', '{':
			n += 2
		case '\n':
			n++
		}
	}
	return n
}

// TooMuchYAMLError is returned by Run when the items the function reads
// hold more YAML than the fast path keeps in memory for a list of the
// input's size.
type TooMuchYAMLError struct {
	// Size is the input's size in bytes.
	Size int
	// Item is the index of the item that would have gone past the budget.
	Item int
	// Nodes is the YAML nodes kept with that item (an upper bound).
	Nodes int
	// Budget is the nodes allowed for the input's size.
	Budget int
}

// Error says what was refused and what to do.
func (e *TooMuchYAMLError) Error() string {
	return fmt.Sprintf("the ResourceList is %d bytes and the resources rotate-certs reads in it hold more YAML than it keeps in memory "+
		"for a list of that size: with items[%d] they come to about %d YAML nodes, where %d is the most (%d times the input in memory, "+
		"plus %d MiB); each node is a key, a value or an entry, and manifests typically have one per 15 to 25 bytes; "+
		"split the package, or run the function on the part that holds the certificates, workloads and Cluster API objects",
		e.Size, e.Item, e.Nodes, e.Budget, keptPerInputByte, keptFloor>>20)
}

// wants reports whether the function reads item, by its type and then by
// Item.
func (r Selection) wants(item *yaml.RNode) bool {
	if kind := item.GetKind(); kind == "" || !r.Kind(item.GetApiVersion(), kind) {
		return false
	}
	return r.Item == nil || r.Item(item)
}

// passable reports whether a parsed item whose text readItem could not
// follow can still pass through as text: kyaml's bookkeeping and writer
// leave it as it is (no synced annotation, no empty or null metadata or
// annotations), and the function would not refuse its shape (metadata,
// labels and annotations are mappings).
func passable(item *yaml.RNode, raw []byte) bool {
	if hasSyncedText(raw) {
		return false
	}
	meta := kube.MapValue(item.YNode(), "metadata")
	if meta == nil {
		return true
	}
	if meta.Kind != yaml.MappingNode || len(meta.Content) == 0 {
		return false
	}
	for _, key := range []string{"annotations", "labels"} {
		v := kube.MapValue(meta, key)
		if v != nil && (v.Kind != yaml.MappingNode || key == "annotations" && len(v.Content) == 0) {
			return false
		}
	}
	return true
}

// collector paces the garbage collector through a run, when TuneMemory
// has set a memory limit (otherwise, or when GOGC or GOMEMLIMIT are set,
// it does nothing). What parsing
// allocates is almost all kept - the nodes of the items the function
// reads, from slabs - so collecting each time the heap grows by a share
// would mark the same nodes again and again. While the items are parsed,
// the collector runs only at a limit that follows an estimate of what is
// kept (keptEstimate), with a third again for garbage; after that, at 30%
// growth over what the last collection found live (at least 64 MiB).
// Never above TuneMemory's limit.
type collector struct {
	active         bool
	percent        int
	ceiling, limit int64
}

func startCollector() *collector {
	c := &collector{ceiling: debug.SetMemoryLimit(-1)}
	if c.ceiling == math.MaxInt64 || userTuned() {
		return c
	}
	c.active = true
	c.percent = debug.SetGCPercent(-1)
	return c
}

// keptEstimate is an upper estimate of the heap a run holds for an input
// of size bytes with items items, nodes of which are kept: the input, a
// few words per item, the nodes with their strings and their places in
// lists, and the function's own records of them.
func keptEstimate(size, items, nodes int) int64 {
	return int64(size) + int64(items)*96 + int64(nodes)*240 + 16<<20
}

// parsing sets the limit for the heap estimated so far.
func (c *collector) parsing(estimate int64) {
	if !c.active {
		return
	}
	if limit := min(estimate*4/3+32<<20, c.ceiling); limit > c.limit+c.limit/16 || c.limit == 0 {
		c.limit = limit
		debug.SetMemoryLimit(limit)
	}
}

// parsed hands collection back to heap growth, kept being the estimate of
// the heap the run holds: 30% over what the last collection found live,
// but at least growthFloor, so that a small list is not collected again
// and again for the few megabytes the function and the writer allocate.
func (c *collector) parsed(kept int64) {
	if c.active {
		debug.SetGCPercent(max(30, int(growthFloor*100/max(kept, 1))))
		debug.SetMemoryLimit(c.ceiling)
	}
}

// growthFloor is the least the heap grows between two collections once
// the items are parsed.
const growthFloor = 64 << 20

// stop restores the collector as TuneMemory left it.
func (c *collector) stop() {
	if c.active {
		debug.SetGCPercent(c.percent)
		debug.SetMemoryLimit(c.ceiling)
	}
}

// TuneMemory sets the garbage collector for one run of function mode over
// an input of size bytes, unless GOGC or GOMEMLIMIT are set: a soft limit
// of 40 times the input plus 64 MiB, which the kept nodes stay well below
// (parseBudget), and under it Run paces the collections itself (the nodes
// of a large list are live until the output is written, and Go's default
// would collect each time the heap doubled, marking them again each time,
// and double the peak). It returns a function that restores the previous
// settings.
func TuneMemory(size int) (restore func()) {
	if userTuned() {
		return func() {}
	}
	limit := debug.SetMemoryLimit(int64(40*size + 64<<20))
	return func() { debug.SetMemoryLimit(limit) }
}

// userTuned reports whether the garbage collector is set from the
// environment, which takes precedence over rotate-certs' own pacing.
func userTuned() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" }
