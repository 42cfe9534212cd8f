package resio

import (
	"testing"

	"github.com/rotate-certs/rotate-certs/internal/golden"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestDefaultPathAndIndexMatchesKyaml holds render's shortcut to what
// kioutil.DefaultPathAndIndexAnnotation does over the whole list: items as
// read (both forms), new items without a path or an index, items with one
// form of a pair only, several files, indexes out of order.
func TestDefaultPathAndIndexMatchesKyaml(t *testing.T) {
	read := func(path, index string) string {
		return "  annotations:\n    config.kubernetes.io/path: " + path + "\n    internal.config.kubernetes.io/path: " + path +
			"\n    config.kubernetes.io/index: '" + index + "'\n    internal.config.kubernetes.io/index: '" + index + "'\n"
	}
	cases := map[string][]string{
		"all read": {read("a.yaml", "0"), read("a.yaml", "1"), read("b.yaml", "0")},
		"new items": {read("a.yaml", "0"), read("a.yaml", "3"), "  annotations:\n    config.kubernetes.io/path: a.yaml\n",
			"  annotations:\n    internal.config.kubernetes.io/path: b.yaml\n", "  name: no-annotations\n", read("b.yaml", "2")},
		"one form only": {read("a.yaml", "0"), "  annotations:\n    config.kubernetes.io/index: '5'\n    config.kubernetes.io/path: a.yaml\n",
			"  annotations:\n    internal.config.kubernetes.io/id: '7'\n" + "    config.kubernetes.io/path: c.yaml\n    internal.config.kubernetes.io/path: c.yaml\n    config.kubernetes.io/index: '0'\n    internal.config.kubernetes.io/index: '0'\n"},
		"out of order": {read("a.yaml", "4"), "  annotations:\n    config.kubernetes.io/path: a.yaml\n", read("a.yaml", "2"), "  annotations:\n    config.kubernetes.io/path: a.yaml\n"},
		"nothing read": {"  name: x\n", "  name: y\n"},
	}
	for name, metas := range cases {
		t.Run(name, func(t *testing.T) {
			parse := func() []*yaml.RNode {
				var out []*yaml.RNode
				for i, m := range metas {
					out = append(out, yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c"+string(rune('a'+i))+"\n"+m))
				}
				return out
			}
			want, got := parse(), parse()
			require.NoError(t, kioutil.DefaultPathAndIndexAnnotation("", want))
			require.NoError(t, defaultPathAndIndex(got))
			require.Equal(t, golden.Encode(t, want), golden.Encode(t, got))
		})
	}
}
