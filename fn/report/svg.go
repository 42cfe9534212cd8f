package report

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/policy"
)

// Layout of the timeline, in SVG user units (pixels at 100%).
const (
	svgWidth      = 1100.0
	svgLabelWidth = 330.0 // left column: subject and resource
	svgRightPad   = 120.0 // right of the latest date: the date text
	svgTop        = 78.0  // title, zone labels and axis
	svgRowHeight  = 30.0
	svgLegend     = 64.0
	svgCAHeight   = 16.0
	svgLeafHeight = 10.0
	day           = 24 * time.Hour
	// The window is clipped to this much history and future so that a
	// ten-year root does not squash a ninety-day leaf to a dot; bars that
	// run past an edge end in an arrow.
	svgMaxPast   = 2 * 365 * day
	svgMaxFuture = 3 * 365 * day
	// svgMinZone is the narrowest the fail zone is drawn.
	svgMinZone = 6.0
)

var statusFill = map[Status]string{
	StatusOK:      "#3a8f3a",
	StatusWarn:    "#e0a100",
	StatusFail:    "#d43f3a",
	StatusExpired: "#9a9a9a",
}

// RenderSVG draws the report as a timeline: one bar per certificate from
// notBefore to notAfter (CAs tall, leaves thin, coloured by status), a
// diamond per reported expiry, today's line, the fail and warn zones that
// follow it, a band where an old and a new CA held in the same value
// overlap, and a marker on each leaf to re-issue at the date its issuer
// leaves the bundle. Rows are grouped by the value that holds them. The
// output is deterministic: the same report gives the same bytes.
//
// layoutTimeline (svglayout.go) decides where everything goes; the draw
// functions below only write it.
func RenderSVG(r Report) []byte {
	l := layoutTimeline(r)
	var c svgCanvas
	c.header(r, l)
	c.zones(r, l)
	c.axis(l)
	c.rowLabels(l, r.multiPackage())
	c.overlaps(l)
	c.bars(l)
	c.reissues(r, l)
	c.today(r, l)
	c.legend(r, l)
	c.w("</svg>\n")
	return c.b.Bytes()
}

// svgCanvas is the SVG document being written.
type svgCanvas struct{ b bytes.Buffer }

func (c *svgCanvas) w(format string, args ...any) { fmt.Fprintf(&c.b, format, args...) }

// header writes the document element, the title and the summary line.
func (c *svgCanvas) header(r Report, l timeline) {
	c.w(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	c.w(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="DejaVu Sans, Verdana, sans-serif" font-size="11">`+"\n",
		num(svgWidth), num(l.height), num(svgWidth), num(l.height))
	c.w(`<title>rotate-certs certificate timeline at %s</title>`+"\n", esc(r.now.Format(time.RFC3339)))
	c.w(`<rect class="background" x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", num(svgWidth), num(l.height))
	n := r.Counts()
	c.w(`<text x="12" y="20" font-size="14" font-weight="bold">Certificate timeline</text>` + "\n")
	c.w(`<text x="12" y="36" fill="#555555">now %s · warn within %s · fail within %s · %d certificate(s): %d ok, %d warn, %d FAIL, %d expired</text>`+"\n",
		esc(r.now.Format("2006-01-02 15:04 UTC")), policy.FormatDuration(r.warnWithin), policy.FormatDuration(r.failWithin), n.Certificates, n.OK, n.Warn, n.Fail, n.Expired)
}

// zones writes the zones after today: fail first (nearest), then warn.
func (c *svgCanvas) zones(r Report, l timeline) {
	x, now, bottom := l.x, r.now, l.bottom
	failEnd, warnEnd := now.Add(r.failWithin), now.Add(r.warnWithin)
	c.w(`<rect class="zone-warn" x="%s" y="%s" width="%s" height="%s" fill="#fff1c2"/>`+"\n",
		num(x(failEnd)), num(svgTop-8), num(x(warnEnd)-x(failEnd)), num(bottom-svgTop+8))
	// The fail zone is a few days on a window of years: drawn at least
	// svgMinZone wide, outlined, and labelled with the date it ends, so
	// that it is seen.
	c.w(`<rect class="zone-fail" x="%s" y="%s" width="%s" height="%s" fill="#f9d0ce" stroke="#d43f3a" stroke-width="0.8"/>`+"\n",
		num(x(now)), num(svgTop-8), num(max(x(failEnd)-x(now), svgMinZone)), num(bottom-svgTop+8))
	c.w(`<text class="zone-fail-label" x="%s" y="%s" fill="#b0302b" font-size="9">fail zone to %s (%s)</text>`+"\n",
		num(x(now)+2), num(bottom+11), failEnd.Format(time.DateOnly), policy.FormatDuration(r.failWithin))
}

// axis writes the month ticks of l.ticks, labelled by month or year.
func (c *svgCanvas) axis(l timeline) {
	for _, m := range l.ticks() {
		label := m.Format("2006-01")
		if m.Month() == time.January {
			label = m.Format("2006")
		}
		c.w(`<line class="tick" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e2e2e2"/>`+"\n", num(l.x(m)), num(svgTop-4), num(l.x(m)), num(l.bottom))
		c.w(`<text x="%s" y="%s" text-anchor="middle" fill="#777777" font-size="10">%s</text>`+"\n", num(l.x(m)), num(svgTop-12), label)
	}
}

// rowLabels writes the stripes and the labels of the rows: the subject,
// and where it is held (with its package when there are several).
func (c *svgCanvas) rowLabels(l timeline, multi bool) {
	for i, e := range l.rows {
		y := svgTop + float64(i)*svgRowHeight
		if i%2 == 1 {
			c.w(`<rect class="stripe" x="0" y="%s" width="%s" height="%s" fill="#000000" fill-opacity="0.035"/>`+"\n", num(y), num(svgWidth), num(svgRowHeight))
		}
		subject := e.subject
		if e.isCA {
			subject = "CA " + subject
		}
		c.w(`<text x="12" y="%s" font-weight="bold">%s</text>`+"\n", num(y+13), esc(truncate(subject, 48)))
		where := e.Resource.String() + " " + e.key
		if multi {
			where = packageCell(e.pkg) + ": " + where
		}
		c.w(`<text x="12" y="%s" fill="#666666" font-size="9.5">%s</text>`+"\n", num(y+25), esc(truncate(where, 62)))
	}
}

// overlaps writes the overlaps of consecutive CAs held in the same value:
// the rotation window during which both must be trusted.
func (c *svgCanvas) overlaps(l timeline) {
	for _, o := range svgOverlaps(l.rows) {
		y0 := svgTop + float64(o.first)*svgRowHeight + 3
		y1 := svgTop + float64(o.last+1)*svgRowHeight - 3
		x0, x1 := l.x(o.from), l.x(o.to)
		c.w(`<rect class="overlap" x="%s" y="%s" width="%s" height="%s" fill="#2f6fd6" fill-opacity="0.13" stroke="#2f6fd6" stroke-dasharray="3 2"><title>%s</title></rect>`+"\n",
			num(x0), num(y0), num(max(x1-x0, 1)), num(y1-y0),
			esc(fmt.Sprintf("old and new CA overlap %s to %s (%d days)", o.from.Format("2006-01-02"), o.to.Format("2006-01-02"), int(o.to.Sub(o.from)/day))))
	}
}

// bars writes a bar per certificate and a diamond per reported expiry,
// each with its expiry date and days left.
func (c *svgCanvas) bars(l timeline) {
	for i, e := range l.rows {
		mid := l.mid(i)
		fill := statusFill[e.Status]
		date := e.notAfter.Format("2006-01-02")
		if e.approximate {
			date = "~" + date
		}
		label := fmt.Sprintf("%s  %dd", date, e.DaysLeft)
		if e.Type == typeExpiry {
			cx := l.x(e.notAfter)
			c.w(`<path class="expiry" d="M %s %s l 7 7 l -7 7 l -7 -7 z" fill="%s" stroke="#333333" stroke-width="0.6"><title>%s</title></path>`+"\n",
				num(cx), num(mid-7), fill, esc(fmt.Sprintf("%s %s: %s expire %s (%s)", e.Resource, e.key, e.subject, date, tableStatus(e.Status))))
			c.w(`<text x="%s" y="%s" fill="#333333" font-size="10">%s</text>`+"\n", num(cx+10), num(mid+4), esc(label))
			continue
		}
		h := svgLeafHeight
		if e.isCA {
			h = svgCAHeight
		}
		x0, x1 := l.x(e.notBefore), l.x(e.notAfter)
		c.w(`<rect class="bar" data-sha256="%s" x="%s" y="%s" width="%s" height="%s" rx="2" fill="%s" stroke="#222222" stroke-opacity="0.35"><title>%s</title></rect>`+"\n",
			e.sha256, num(x0), num(mid-h/2), num(max(x1-x0, 1.5)), num(h), fill,
			esc(fmt.Sprintf("%s %s\n%s\nissuer %s\nsha256 %s\n%s to %s, %d days left: %s",
				e.Resource, e.key, e.subject, e.issuer, e.sha256, e.notBefore.Format(time.RFC3339), e.notAfter.Format(time.RFC3339), e.DaysLeft, tableStatus(e.Status))))
		if e.notBefore.Before(l.t0) {
			c.w(`<path class="clipped" d="M %s %s l -6 %s l 6 %s z" fill="%s"/>`+"\n", num(x0), num(mid-h/2), num(h/2), num(h/2), fill)
		}
		if e.notAfter.After(l.t1) {
			c.w(`<path class="clipped" d="M %s %s l 6 %s l -6 %s z" fill="%s"/>`+"\n", num(x1), num(mid-h/2), num(h/2), num(h/2), fill)
		}
		c.w(`<text x="%s" y="%s" fill="#333333" font-size="10">%s</text>`+"\n", num(max(x1, l.markerAt[i])+8), num(mid+4), esc(label))
	}
}

// reissues writes the re-issue markers: where a leaf's issuer leaves its
// bundle.
func (c *svgCanvas) reissues(r Report, l timeline) {
	for _, re := range r.reissues {
		i, ok := l.index[rowID(re.Package, re.Resource, re.Key, re.SHA256)]
		if !ok {
			continue
		}
		mid := l.mid(i)
		cx := l.x(re.IssuerLeavesAt)
		c.w(`<path class="reissue" d="M %s %s l 5 -9 l -10 0 z" fill="#7b2cbf"><title>%s</title></path>`+"\n", num(cx), num(mid-4),
			esc(fmt.Sprintf("re-issue: issuer %s leaves bundle %q on %s (%s)", re.Issuer, re.Bundle, re.IssuerLeavesAt.Format("2006-01-02"), re.State)))
		c.w(`<line class="reissue-line" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#7b2cbf" stroke-width="1.5"/>`+"\n", num(cx), num(mid-4), num(cx), num(mid+7))
		// The date in the picture, not only in the tooltip: a printed or
		// pasted timeline has no tooltips.
		c.w(`<text class="reissue-date" x="%s" y="%s" fill="#7b2cbf" font-size="9">re-issue by %s</text>`+"\n", num(cx+7), num(mid-6), re.IssuerLeavesAt.Format(time.DateOnly))
	}
}

// today writes today's line.
func (c *svgCanvas) today(r Report, l timeline) {
	x, now := l.x(r.now), r.now
	c.w(`<line class="today" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#c0392b" stroke-width="1.5" stroke-dasharray="5 3"/>`+"\n", num(x), num(svgTop-24), num(x), num(l.bottom))
	c.w(`<text x="%s" y="%s" text-anchor="middle" fill="#c0392b" font-weight="bold" font-size="10">today %s</text>`+"\n", num(x), num(svgTop-27), now.Format("2006-01-02"))
}

// legend writes the legend below the rows, in two lines.
func (c *svgCanvas) legend(r Report, l timeline) {
	ly := l.bottom + 22
	lx := 12.0
	item := func(swatch, text string, width float64) {
		c.w("%s\n", swatch)
		c.w(`<text x="%s" y="%s" fill="#333333">%s</text>`+"\n", num(lx+22), num(ly+4), esc(text))
		lx += width
	}
	for _, s := range []Status{StatusOK, StatusWarn, StatusFail, StatusExpired} {
		item(fmt.Sprintf(`<rect x="%s" y="%s" width="16" height="10" rx="2" fill="%s"/>`, num(lx), num(ly-5), statusFill[s]), tableStatus(s), 80)
	}
	item(fmt.Sprintf(`<rect x="%s" y="%s" width="16" height="10" fill="#f9d0ce"/>`, num(lx), num(ly-5)), "fail zone ("+policy.FormatDuration(r.failWithin)+")", 130)
	item(fmt.Sprintf(`<rect x="%s" y="%s" width="16" height="10" fill="#fff1c2"/>`, num(lx), num(ly-5)), "warn zone ("+policy.FormatDuration(r.warnWithin)+")", 140)
	item(fmt.Sprintf(`<rect x="%s" y="%s" width="16" height="10" fill="#2f6fd6" fill-opacity="0.13" stroke="#2f6fd6" stroke-dasharray="3 2"/>`, num(lx), num(ly-5)), "CA overlap", 110)
	item(fmt.Sprintf(`<path d="M %s %s l 5 -9 l -10 0 z" fill="#7b2cbf"/>`, num(lx+8), num(ly+4)), "issuer leaves bundle", 0)
	ly += 20
	lx = 12
	item(fmt.Sprintf(`<rect x="%s" y="%s" width="16" height="14" rx="2" fill="#777777"/>`, num(lx), num(ly-7)), "CA certificate", 130)
	item(fmt.Sprintf(`<rect x="%s" y="%s" width="16" height="8" rx="2" fill="#777777"/>`, num(lx), num(ly-4)), "leaf certificate", 130)
	item(fmt.Sprintf(`<path d="M %s %s l 7 7 l -7 7 l -7 -7 z" fill="#777777"/>`, num(lx+8), num(ly-7)), "reported expiry (no certificate)", 230)
	item(fmt.Sprintf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#c0392b" stroke-width="1.5" stroke-dasharray="5 3"/>`, num(lx+8), num(ly-7), num(lx+8), num(ly+7)), "today", 0)
}

// rowID names the row of a certificate: the value that holds it and its
// fingerprint (a re-issue marker finds its leaf's row by it).
func rowID(pkg string, ref kube.Ref, key, sha256 string) string {
	return pkg + "\x00" + refKey(ref) + "\x00" + key + "\x00" + sha256
}

// svgRows groups entries by the value that holds them (so that a bundle's
// CAs sit together), groups ordered by their soonest expiry, entries in a
// group by notBefore.
func svgRows(entries []Entry) []Entry {
	type group struct {
		key     string
		soonest time.Time
		entries []Entry
	}
	byKey := map[string]*group{}
	var groups []*group
	for _, e := range entries {
		k := e.pkg + "\x00" + refKey(e.Resource) + "\x00" + e.key
		g, ok := byKey[k]
		if !ok {
			g = &group{key: k, soonest: e.notAfter}
			byKey[k] = g
			groups = append(groups, g)
		}
		if e.notAfter.Before(g.soonest) {
			g.soonest = e.notAfter
		}
		g.entries = append(g.entries, e)
	}
	slices.SortStableFunc(groups, func(a, b *group) int {
		return cmp.Or(a.soonest.Compare(b.soonest), cmp.Compare(a.key, b.key))
	})
	var rows []Entry
	for _, g := range groups {
		slices.SortStableFunc(g.entries, func(a, b Entry) int {
			return cmp.Or(a.notBefore.Compare(b.notBefore), cmp.Compare(a.sha256, b.sha256))
		})
		rows = append(rows, g.entries...)
	}
	return rows
}

type svgOverlap struct {
	first, last int
	from, to    time.Time
}

// svgOverlaps finds, within each group of rows, consecutive CA
// certificates whose validity overlaps: the old CA and the new one.
func svgOverlaps(rows []Entry) []svgOverlap {
	var out []svgOverlap
	for i := 0; i < len(rows); i++ {
		a := rows[i]
		if a.Type != typeCertificate || !a.isCA {
			continue
		}
		for j := i + 1; j < len(rows); j++ {
			b := rows[j]
			if b.pkg != a.pkg || refKey(b.Resource) != refKey(a.Resource) || b.key != a.key {
				break
			}
			if b.Type != typeCertificate || !b.isCA {
				continue
			}
			from, to := b.notBefore, a.notAfter
			if b.notAfter.Before(to) {
				to = b.notAfter
			}
			if from.Before(to) {
				out = append(out, svgOverlap{first: i, last: j, from: from, to: to})
			}
			break
		}
	}
	return out
}

// svgWindow returns the time range drawn: every date in the report plus
// today and the warn zone, clipped to svgMaxPast and svgMaxFuture around
// now, with a small margin.
func svgWindow(r Report, rows []Entry) (time.Time, time.Time) {
	now := r.now
	t0, t1 := now.Add(-30*day), now.Add(max(r.warnWithin, 30*day)+30*day)
	for _, e := range rows {
		start := e.notBefore
		if e.Type == typeExpiry {
			start = e.notAfter
		}
		if start.Before(t0) {
			t0 = start
		}
		if e.notAfter.After(t1) {
			t1 = e.notAfter
		}
	}
	if lo := now.Add(-svgMaxPast); t0.Before(lo) {
		t0 = lo
	}
	if hi := now.Add(svgMaxFuture); t1.After(hi) {
		t1 = hi
	}
	pad := t1.Sub(t0) / 50
	return t0.Add(-pad), t1.Add(pad)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
