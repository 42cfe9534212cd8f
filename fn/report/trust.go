package report

import (
	"bytes"
	"fmt"
	"time"
)

// trustTable lists, per bundle and target, each CA the bundle holds and
// why: the source it was read from, or the retirement and verdict of a
// previous CA. The default table leaves the target out (-o wide shows
// it), unless a bundle's targets disagree: then each row's detail starts
// with its target.
func trustTable(r Report, pkg bool, opts TableOptions) *table {
	t := newTable(pkg, opts,
		[]string{"BUNDLE", "TARGET", "CA", "SHA256", "NOT AFTER (UTC)", "WHY", "DETAIL"},
		[]string{"BUNDLE", "CA", "WHY", "DETAIL"})
	targets := map[string]map[string]bool{}
	for _, x := range r.trust {
		k := x.Package + "\x00" + x.Bundle
		if targets[k] == nil {
			targets[k] = map[string]bool{}
		}
		targets[k][x.Target.String()] = true
	}
	for _, x := range r.trust {
		target := x.Target.String()
		if x.Targets > 1 {
			target += fmt.Sprintf(" (+%d)", x.Targets-1)
		}
		var cells []string
		if opts.Wide {
			cells = []string{cell(x.Bundle), cell(target), cell(x.Subject), short(x.SHA256), x.NotAfter.Format(tableTime), string(x.Reason), cell(trustDetail(x))}
		} else {
			detail := trustDetail(x)
			if len(targets[x.Package+"\x00"+x.Bundle]) > 1 {
				detail = target + ": " + detail
			}
			cells = []string{cell(x.Bundle), cell(x.Subject), string(x.Reason), cell(detail)}
		}
		t.addRow(pkg, x.Package, cells, "")
	}
	return t
}

// writeRenewals lists the cert-manager commands that renew the
// certificates to re-issue whose Secrets name their Certificate, each
// once: issuers and intermediates first, since a leaf renewed before its
// issuer is issued by the old one again.
func writeRenewals(buf *bytes.Buffer, r Report) {
	seen := map[string]bool{}
	var lines []string
	for _, ca := range []bool{true, false} {
		for _, x := range r.reissues {
			if x.Command == "" || x.IsCA != ca || seen[x.Command] {
				continue
			}
			seen[x.Command] = true
			lines = append(lines, fmt.Sprintf("  %s   # %s %s", x.Command, x.Resource, x.Key))
		}
	}
	if len(lines) == 0 {
		return
	}
	buf.WriteString("Renew with cert-manager:\n")
	for _, l := range lines {
		buf.WriteString(l + "\n")
	}
}

// trustStamp formats an optional time for JSON: "" when zero.
func trustStamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return stamp(t)
}
