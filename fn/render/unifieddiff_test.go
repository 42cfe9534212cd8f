package render

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDiffFormat(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		created             bool
		want                string
	}{
		{"equal", "a\nb\n", "a\nb\n", false, ""},
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", false,
			"--- a/f.yaml\n+++ b/f.yaml\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"created", "", "x\ny\n", true,
			"--- /dev/null\n+++ b/f.yaml\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"appended after a long unchanged start", "1\n2\n3\n4\n5\n6\n", "1\n2\n3\n4\n5\n6\n7\n", false,
			"--- a/f.yaml\n+++ b/f.yaml\n@@ -4,3 +4,4 @@\n 4\n 5\n 6\n+7\n"},
		{"no newline at the end", "a\nb", "a\nc", false,
			"--- a/f.yaml\n+++ b/f.yaml\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "x\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ny\n", false,
			"--- a/f.yaml\n+++ b/f.yaml\n@@ -1,4 +1,4 @@\n-1\n+x\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+y\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, unifiedDiff("f.yaml", tc.before, tc.after, tc.created))
		})
	}
}

// TestDiffAppliesAndIsMinimal: on random texts, applying the diff to the
// old text gives the new one, and it changes no more lines than the
// length of the longest common subsequence allows.
func TestDiffAppliesAndIsMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		a := randomText(r)
		b := mutate(r, a)
		d := unifiedDiff("f", a, b, false)
		if a == b {
			require.Empty(t, d)
			continue
		}
		got, changed := apply(t, a, d)
		require.Equal(t, b, got, "diff:\n%s", d)
		la, lb := lines(a), lines(b)
		require.Equal(t, len(la)+len(lb)-2*lcs(la, lb), changed, "not a shortest edit script:\n%s", d)
	}
}

// TestDiffMatchesPatch: GNU patch applies the output (skipped without patch).
func TestDiffMatchesPatch(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("patch is not installed; TestDiffAppliesAndIsMinimal applies the diffs in Go")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20; i++ {
		a := randomText(r)
		b := mutate(r, a)
		if a == b {
			continue
		}
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte(a), 0o644))
		cmd := exec.Command(patch, "-p1", "--quiet")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(unifiedDiff("f", a, b, false))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		got, err := os.ReadFile(filepath.Join(dir, "f"))
		require.NoError(t, err)
		require.Equal(t, b, string(got))
	}
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(30); n > 0; n-- {
		fmt.Fprintf(&b, "line %d\n", r.IntN(8))
	}
	if r.IntN(5) == 0 {
		b.WriteString("last")
	}
	return b.String()
}

func mutate(r *rand.Rand, s string) string {
	ls := lines(s)
	for n := r.IntN(6); n > 0; n-- {
		switch i := r.IntN(len(ls) + 1); r.IntN(3) {
		case 0:
			ls = append(ls[:i], append([]string{fmt.Sprintf("new %d\n", r.IntN(5))}, ls[i:]...)...)
		case 1:
			if i < len(ls) {
				ls = append(ls[:i], ls[i+1:]...)
			}
		default:
			if i < len(ls) {
				ls[i] = fmt.Sprintf("changed %d\n", r.IntN(5))
			}
		}
	}
	for i := 0; i < len(ls)-1; i++ {
		if !strings.HasSuffix(ls[i], "\n") {
			ls[i] += "\n"
		}
	}
	return strings.Join(ls, "")
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)

// apply applies a unified diff to a and returns the result and the
// number of lines added or removed.
func apply(t *testing.T, a, d string) (string, int) {
	t.Helper()
	src := lines(a)
	var out []string
	pos, changed := 0, 0
	dl := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	require.True(t, strings.HasPrefix(dl[0], "--- ") && strings.HasPrefix(dl[1], "+++ "), d)
	for i := 2; i < len(dl); i++ {
		m := hunkHeader.FindStringSubmatch(dl[i])
		require.NotNil(t, m, "line %q of\n%s", dl[i], d)
		start, _ := strconv.Atoi(m[1])
		count := 1
		if m[2] != "" {
			count, _ = strconv.Atoi(m[2])
		}
		if count > 0 {
			start--
		}
		require.GreaterOrEqual(t, start, pos)
		out = append(out, src[pos:start]...)
		pos = start
		for i+1 < len(dl) && !strings.HasPrefix(dl[i+1], "@@") {
			i++
			l := dl[i]
			if l == `\ No newline at end of file` {
				last := len(out) - 1
				if strings.HasPrefix(dl[i-1], "-") {
					continue
				}
				out[last] = strings.TrimSuffix(out[last], "\n")
				continue
			}
			switch l[0] {
			case ' ':
				require.Equal(t, strings.TrimSuffix(src[pos], "\n"), l[1:])
				out = append(out, src[pos])
				pos++
			case '-':
				require.Equal(t, strings.TrimSuffix(src[pos], "\n"), l[1:])
				pos++
				changed++
			case '+':
				out = append(out, l[1:]+"\n")
				changed++
			}
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), changed
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}
