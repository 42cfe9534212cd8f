package report

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/policy"
)

// TableOptions tune the table renderer.
type TableOptions struct {
	// Color adds ANSI colours to the status column (only on a terminal;
	// the caller decides).
	Color bool
	// Wide adds columns (issuer, fingerprint, time of expiry, the
	// package). No table ever cuts a value: like kubectl's, a column is as
	// wide as its widest value, so that every resource name, key and
	// subject can be found with grep.
	Wide bool
	// NoHeaders prints only the rows: no column names, no section title,
	// no summary, no trust table. The certificate rows come first, then,
	// after an empty line, the re-issue rows.
	NoHeaders bool
}

// ANSI colours of the status column.
const (
	ansiReset  = "\x1b[0m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiRed    = "\x1b[1;31m"
	ansiGrey   = "\x1b[2;31m"
)

// tableStatus is the status as the table shows it: ok, warn, FAIL,
// expired. FAIL is in capitals because it is what fails the check.
func tableStatus(s Status) string {
	if s == StatusFail {
		return "FAIL"
	}
	return string(s)
}

// table is rows of cells under column headers, the last column coloured
// separately.
type table struct {
	cols []string
	rows [][]string
	// status holds the last column's colour code per row ("" none).
	status []string
}

// RenderTable renders the report as a table a person reads at a glance:
// one row per certificate or reported expiry, soonest expiry first, then
// the certificates to re-issue (and the cert-manager commands that renew
// them), why each bundle holds each CA, the unreadable values and a
// summary line. The
// default table shows the resource, key, subject, expiry date, days left
// and status (and the package when the rows come from more than one), and
// for a leaf to re-issue its resource, key, bundle, issuer and the date
// the issuer leaves; Wide adds columns. No value is ever cut.
func RenderTable(r Report, opts TableOptions) []byte {
	pkg := opts.Wide || r.multiPackage()
	var buf bytes.Buffer
	if len(r.Entries) == 0 && !opts.NoHeaders {
		buf.WriteString("no certificates found\n")
	}
	if len(r.Entries) > 0 {
		entriesTable(r, pkg, opts).write(&buf, opts)
	}
	if len(r.reissues) > 0 {
		switch {
		case opts.NoHeaders && len(r.Entries) > 0:
			buf.WriteString("\n")
		case !opts.NoHeaders:
			buf.WriteString("\nCertificates to re-issue (they chain only to a previous CA of a trust bundle, or to one that left it):\n")
		}
		reissueTable(r, pkg, opts).write(&buf, opts)
		if !opts.NoHeaders {
			writeRenewals(&buf, r)
		}
	}
	if len(r.Waves) > 0 && !opts.NoHeaders {
		buf.WriteString("\nRestart waves still to roll (restart.waves; each bundle keeps its previous CAs until its last wave has rolled out):\n")
		wavesTable(r, pkg, opts).write(&buf, opts)
	}
	if len(r.Renewals) > 0 && !opts.NoHeaders {
		buf.WriteString("\ncert-manager renewals of the CAs the bundles read (snapshot the Secret and render right after each; a new key leaves the old CA's leaves needing the old CA in the bundle):\n")
		renewalsTable(r, pkg, opts).write(&buf, opts)
	}
	if opts.NoHeaders {
		return buf.Bytes()
	}
	if len(r.Domains) > 0 {
		writeDomains(&buf, r, opts)
	}
	// The trust table explains; scripts read the rows above, or -o json.
	if len(r.trust) > 0 {
		buf.WriteString("\nTrust (why each bundle holds each CA; the verdict of each previous CA):\n")
		trustTable(r, pkg, opts).write(&buf, opts)
	}
	if len(r.Problems) > 0 {
		buf.WriteString("\nUnreadable certificate data:\n")
		for _, p := range r.Problems {
			where := p.resource.String()
			if p.key != "" {
				where += " " + p.key
			}
			if p.pkg != "" && pkg {
				where = p.pkg + ": " + where
			}
			fmt.Fprintf(&buf, "  %s: %s\n", where, p.message)
		}
	}
	c := r.Counts()
	fmt.Fprintf(&buf, "\n%d certificate(s), %d reported expir%s: %d ok, %d warn, %d FAIL, %d expired; %d unreadable; %d certificate(s) to re-issue\n",
		c.Certificates, c.Expiries, plural(c.Expiries, "y", "ies"), c.OK, c.Warn, c.Fail, c.Expired, c.Problems, c.Reissues)
	if n := len(r.Packages); n > 1 {
		fmt.Fprintf(&buf, "%d package(s) with a policy\n", n)
	}
	fmt.Fprintf(&buf, "now %s, warn within %s, fail within %s\n", r.now.Format(time.RFC3339), policy.FormatDuration(r.warnWithin), policy.FormatDuration(r.failWithin))
	return buf.Bytes()
}

// packageCell shows a row's package: "(none)" when no policy applies.
func packageCell(p string) string {
	if p == "" {
		return "(none)"
	}
	return p
}

// newTable starts a table of the wide or the narrow columns, after a
// PACKAGE column when pkg.
func newTable(pkg bool, opts TableOptions, wide, narrow []string) *table {
	t := &table{}
	if pkg {
		t.cols = append(t.cols, "PACKAGE")
	}
	if opts.Wide {
		t.cols = append(t.cols, wide...)
	} else {
		t.cols = append(t.cols, narrow...)
	}
	return t
}

// addRow adds a row of cells with its status colour, after its package
// when pkg.
func (t *table) addRow(pkg bool, pkgName string, cells []string, colour string) {
	var row []string
	if pkg {
		row = append(row, packageCell(pkgName))
	}
	t.rows = append(t.rows, append(row, cells...))
	t.status = append(t.status, colour)
}

func entriesTable(r Report, pkg bool, opts TableOptions) *table {
	t := newTable(pkg, opts,
		[]string{"RESOURCE", "KEY", "SUBJECT", "ISSUER", "SHA256", "NOT AFTER (UTC)", "DAYS", "STATUS"},
		[]string{"RESOURCE", "KEY", "SUBJECT", "EXPIRES", "DAYS", "STATUS"})
	for _, e := range r.Entries {
		date := e.notAfter.Format(opts.layout())
		if e.approximate {
			date = "~" + e.notAfter.Format(time.DateOnly)
		}
		cells := []string{cell(e.Resource.String()), cell(e.key), cell(e.subject)}
		if opts.Wide {
			issuer := e.issuer
			if e.Type == typeExpiry {
				issuer = "(reported)"
			}
			cells = append(cells, cell(issuer), short(e.sha256))
		}
		cells = append(cells, date, fmt.Sprintf("%d", e.DaysLeft), tableStatus(e.Status))
		t.addRow(pkg, e.pkg, cells, statusColour[e.Status])
	}
	return t
}

func reissueTable(r Report, pkg bool, opts TableOptions) *table {
	// The leaf is its resource and key in the narrow table; -o wide adds
	// its subject.
	t := newTable(pkg, opts,
		[]string{"RESOURCE", "KEY", "SUBJECT", "SHA256", "BUNDLE", "NEEDS CA", "CA SHA256", "CA LEAVES (UTC)", "DAYS", "STATE"},
		[]string{"RESOURCE", "KEY", "BUNDLE", "NEEDS CA", "CA LEAVES", "DAYS", "STATE"})
	for _, x := range r.reissues {
		days := fmt.Sprintf("%d", x.DaysLeft)
		var cells []string
		if opts.Wide {
			cells = []string{cell(x.Resource.String()), cell(x.Key), cell(x.Subject), short(x.SHA256), cell(x.Bundle), cell(x.Issuer),
				short(x.IssuerSHA256), x.IssuerLeavesAt.Format(tableTime), days, string(x.State)}
		} else {
			cells = []string{cell(x.Resource.String()), cell(x.Key), cell(x.Bundle), cell(x.Issuer),
				x.IssuerLeavesAt.Format(time.DateOnly), days, string(x.State)}
		}
		t.addRow(pkg, x.Package, cells, "")
	}
	return t
}

var statusColour = map[Status]string{StatusOK: ansiGreen, StatusWarn: ansiYellow, StatusFail: ansiRed, StatusExpired: ansiGrey}

// gap is the space between columns.
const gap = 2

// write prints the table: each column as wide as its widest cell (or
// header), two spaces apart.
func (t *table) write(buf *bytes.Buffer, opts TableOptions) {
	widths := make([]int, len(t.cols))
	for i, c := range t.cols {
		if !opts.NoHeaders {
			widths[i] = runes(c)
		}
		for _, row := range t.rows {
			widths[i] = max(widths[i], runes(row[i]))
		}
	}
	line := func(cells []string, colour string) {
		var b strings.Builder
		for i, c := range cells {
			last := i == len(cells)-1
			if last && colour != "" && opts.Color {
				c = colour + c + ansiReset
			}
			b.WriteString(c)
			if !last {
				b.WriteString(strings.Repeat(" ", widths[i]-runes(cells[i])+gap))
			}
		}
		buf.WriteString(b.String() + "\n")
	}
	if !opts.NoHeaders {
		line(t.cols, "")
	}
	for i, row := range t.rows {
		line(row, t.status[i])
	}
}

func runes(s string) int { return len([]rune(s)) }

const tableTime = "2006-01-02 15:04"

// layout is how the table writes a time: to the minute in the wide table,
// the date alone in the narrow one.
func (o TableOptions) layout() string {
	if o.Wide {
		return tableTime
	}
	return time.DateOnly
}

// cell keeps a value on one line and out of the column grid.
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
