package report

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

// TableOptions tune the table renderer.
type TableOptions struct {
	// Color adds ANSI colours to the status column (only on a terminal;
	// the caller decides).
	Color bool
}

// ANSI colours of the status column.
const (
	ansiReset  = "\x1b[0m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiRed    = "\x1b[1;31m"
	ansiGrey   = "\x1b[2;31m"
)

// TableStatus is the status as the table shows it: ok, warn, FAIL,
// expired. FAIL is in capitals because it is what fails the check.
func TableStatus(s Status) string {
	if s == StatusFail {
		return "FAIL"
	}
	return string(s)
}

// RenderTable renders the report as a table a person reads at a glance:
// one row per certificate or reported expiry, soonest expiry first, then
// the leaves to re-issue, the unreadable values and a summary line.
func RenderTable(r Report, opts TableOptions) []byte {
	var buf bytes.Buffer
	if len(r.Entries) == 0 {
		buf.WriteString("no certificates found\n")
	} else {
		tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RESOURCE\tKEY\tSUBJECT\tISSUER\tSHA256\tNOT AFTER (UTC)\tDAYS\tSTATUS")
		for _, e := range r.Entries {
			notAfter := e.NotAfter.Format(tableTime)
			issuer := e.Issuer
			if e.Type == TypeExpiry {
				issuer = "(reported)"
			}
			if e.Approximate {
				notAfter = "~" + e.NotAfter.Format("2006-01-02")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n",
				cell(e.Resource.String()), cell(e.Key), cell(e.Subject), cell(issuer), e.Short(), notAfter, e.DaysLeft, colour(e.Status, opts.Color))
		}
		_ = tw.Flush()
	}
	if len(r.Reissues) > 0 {
		buf.WriteString("\nLeaves to re-issue (signed only by a previous CA of a trust bundle):\n")
		tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RESOURCE\tKEY\tSUBJECT\tSHA256\tBUNDLE\tISSUER\tISSUER LEAVES (UTC)\tDAYS\tSTATE")
		for _, x := range r.Reissues {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n",
				cell(x.Resource.String()), cell(x.Key), cell(x.Subject), short(x.SHA256), cell(x.Bundle), cell(x.Issuer),
				x.IssuerLeavesAt.Format(tableTime), x.DaysLeft, x.State)
		}
		_ = tw.Flush()
	}
	if len(r.Problems) > 0 {
		buf.WriteString("\nUnreadable certificate data:\n")
		for _, p := range r.Problems {
			where := p.Resource.String()
			if p.Key != "" {
				where += " " + p.Key
			}
			fmt.Fprintf(&buf, "  %s: %s\n", where, p.Message)
		}
	}
	c := r.Counts()
	fmt.Fprintf(&buf, "\n%d certificate(s), %d reported expir%s: %d ok, %d warn, %d FAIL, %d expired; %d unreadable; %d leaf(s) to re-issue\n",
		c.Certificates, c.Expiries, plural(c.Expiries, "y", "ies"), c.OK, c.Warn, c.Fail, c.Expired, c.Problems, c.Reissues)
	fmt.Fprintf(&buf, "now %s, warn within %s, fail within %s\n", r.Now.Format(time.RFC3339), FormatDuration(r.WarnWithin), FormatDuration(r.FailWithin))
	return buf.Bytes()
}

const tableTime = "2006-01-02 15:04"

func colour(s Status, on bool) string {
	text := TableStatus(s)
	if !on {
		return text
	}
	c := map[Status]string{StatusOK: ansiGreen, StatusWarn: ansiYellow, StatusFail: ansiRed, StatusExpired: ansiGrey}[s]
	return c + text + ansiReset
}

// cell keeps a value on one line and out of the tab grid.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

func short(sha string) string {
	if len(sha) < 12 {
		return "-"
	}
	return sha[:12]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// FormatDuration writes a threshold in days when it is whole days ("30d"),
// else in Go notation.
func FormatDuration(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}
