package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestResolveVersion covers every way the binary is built: with -ldflags
// (make build, the Dockerfile), go install at a tag or at a commit, and go
// build in a clean or modified checkout.
func TestResolveVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	info := func(mainVersion string, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/rotate-certs/rotate-certs", Version: mainVersion}, Settings: settings}
	}
	for _, tc := range []struct {
		name                 string
		ldVersion, ldCommit  string
		info                 *debug.BuildInfo
		wantVersion, wantSHA string
	}{
		{"ldflags win", "v1.2.3", "0123abc", info("v9.9.9", vcs("fff", "true")), "v1.2.3", "0123abc"},
		{"Dockerfile without COMMIT", "v1.2.3", "unknown", info("(devel)", nil), "v1.2.3", "unknown"},
		{"go install at a tag", "dev", "", info("v0.1.0", nil), "v0.1.0", "unknown"},
		{"go install at a commit", "dev", "", info("v0.1.1-0.20260101120000-0123456789ab", nil), "v0.1.1-0.20260101120000-0123456789ab", "0123456789ab"},
		{"go install of an untagged module", "dev", "", info("v0.0.0-20260101120000-0123456789ab", nil), "v0.0.0-20260101120000-0123456789ab", "0123456789ab"},
		{"go build in a clean checkout", "dev", "", info("(devel)", vcs("0123456789abcdef0123456789abcdef01234567", "false")), "dev", "0123456789abcdef0123456789abcdef01234567"},
		{"go build in a modified checkout", "dev", "", info("(devel)", vcs("0123456789abcdef", "true")), "dev", "0123456789abcdef-dirty"},
		{"go 1.24+ stamps the version from the tag", "dev", "", info("v0.1.1-0.20260101120000-0123456789ab+dirty", vcs("0123456789abcdef", "true")), "v0.1.1-0.20260101120000-0123456789ab+dirty", "0123456789abcdef-dirty"},
		{"ldflags version, commit from VCS", "v1.2.3", "", info("(devel)", vcs("0123456789abcdef", "false")), "v1.2.3", "0123456789abcdef"},
		{"no build info", "dev", "", nil, "dev", "unknown"},
		{"not a pseudo-version", "dev", "", info("v1.0.0-rc.1", nil), "v1.0.0-rc.1", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, c := resolveVersion(tc.ldVersion, tc.ldCommit, tc.info)
			require.Equal(t, tc.wantVersion, v)
			require.Equal(t, tc.wantSHA, c)
		})
	}
}
