// suggest.go finds what a user probably meant when a name they wrote
// names nothing: the nearest existing object of the same kind (the same
// name in another namespace, or a name a few edits away), so that an
// error can say "did you mean" instead of only "not found".
package kube

import (
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Nearest returns the key among have nearest to want, of the same kind:
// the same name in another namespace first; else the name fewest edits
// away (at most a third of the name, at least 2), in want's namespace
// before another; ties go to the first in lexical order. ok is false when
// nothing is near.
func Nearest(want Key, have []Key) (best Key, ok bool) {
	limit := limitFor(want.Name)
	bestScore := -1
	for _, h := range have {
		if h.Kind != want.Kind || h == want {
			continue
		}
		score := 0 // the same name
		if h.Name != want.Name {
			d := distance(h.Name, want.Name)
			if d > limit {
				continue
			}
			score = 2 + 2*d
			if h.Namespace != want.Namespace {
				score++
			}
		}
		if bestScore < 0 || score < bestScore || score == bestScore && less(h, best) {
			best, bestScore = h, score
		}
	}
	return best, bestScore >= 0
}

// Near reports whether Nearest could propose an object named have for
// the name want: the same name, or one few enough edits away. A reader
// that keeps only some objects keeps those, so that its suggestions are
// the ones a reader of every object would make.
func Near(want, have string) bool {
	limit := limitFor(want)
	if d := len(have) - len(want); d > limit || -d > limit {
		return false
	}
	return have == want || distance(have, want) <= limit
}

// limitFor is the most edits a name a user meant may be away from want.
func limitFor(want string) int {
	return max(2, len(want)/3)
}

func less(a, b Key) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// distance is the Levenshtein distance of a and b, in bytes (names are
// ASCII).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Keys returns the data keys of a Secret or ConfigMap (data, stringData,
// binaryData), sorted, each once: the names only, never a value.
func Keys(node *yaml.RNode) []string {
	seen := map[string]bool{}
	for _, field := range []string{"data", "stringData", "binaryData"} {
		m := node.Field(field)
		if m == nil || m.Value == nil || m.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		c := m.Value.YNode().Content
		for i := 0; i+1 < len(c); i += 2 {
			seen[Safe(c[i].Value)] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// KeyList describes keys for a message: "keys ca.crt, tls.crt" or "no
// data".
func KeyList(keys []string) string {
	if len(keys) == 0 {
		return "no data"
	}
	if len(keys) == 1 {
		return "key " + keys[0]
	}
	return "keys " + strings.Join(keys, ", ")
}
