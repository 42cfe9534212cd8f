package report

import "time"

// timeline is where the timeline's parts go: its rows, the time window
// drawn and how times map to x, and the sizes that follow from them.
type timeline struct {
	rows   []Entry
	t0, t1 time.Time
	plotW  float64
	height float64 // of the whole document
	bottom float64 // of the last row
	// index maps a row's id to its position; markerAt holds, per row, the
	// x of the latest re-issue marker on it.
	index    map[string]int
	markerAt map[int]float64
}

// layoutTimeline lays out the timeline of r.
func layoutTimeline(r Report) timeline {
	rows := svgRows(r.Entries)
	t0, t1 := svgWindow(r, rows)
	n := float64(max(len(rows), 1))
	l := timeline{
		rows:     rows,
		t0:       t0,
		t1:       t1,
		plotW:    svgWidth - svgLabelWidth - svgRightPad - 20,
		height:   svgTop + n*svgRowHeight + svgLegend,
		bottom:   svgTop + n*svgRowHeight,
		index:    map[string]int{},
		markerAt: map[int]float64{},
	}
	for i, e := range rows {
		l.index[rowID(e.pkg, e.Resource, e.key, e.sha256)] = i
	}
	// Where each leaf's issuer leaves its bundle (latest marker per row).
	for _, re := range r.reissues {
		if i, ok := l.index[rowID(re.Package, re.Resource, re.Key, re.SHA256)]; ok {
			l.markerAt[i] = max(l.markerAt[i], l.x(re.IssuerLeavesAt))
		}
	}
	return l
}

// x is the horizontal position of t, clipped to the window.
func (l timeline) x(t time.Time) float64 {
	if t.Before(l.t0) {
		t = l.t0
	}
	if t.After(l.t1) {
		t = l.t1
	}
	return svgLabelWidth + 10 + float64(t.Sub(l.t0))/float64(l.t1.Sub(l.t0))*l.plotW
}

// mid is the vertical middle of row i.
func (l timeline) mid(i int) float64 {
	return svgTop + float64(i)*svgRowHeight + svgRowHeight/2
}

// ticks are the first days of the months on the axis, thinned for long
// windows: every month, quarter, half year or year.
func (l timeline) ticks() []time.Time {
	step := 1
	switch span := l.t1.Sub(l.t0); {
	case span > 5*365*day:
		step = 12
	case span > 1100*day:
		step = 6
	case span > 400*day:
		step = 3
	}
	var out []time.Time
	for m := time.Date(l.t0.Year(), l.t0.Month(), 1, 0, 0, 0, 0, time.UTC); !m.After(l.t1); m = m.AddDate(0, 1, 0) {
		if m.Before(l.t0) || (int(m.Month())-1)%step != 0 {
			continue
		}
		out = append(out, m)
	}
	return out
}
