package sim

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Table renders runs as an aligned text table, one row per run.
func Table(runs []Stats) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "cadence\tsettings\tdays\trotations\thandshakes\tfailures\tunpropagated\tmax bundle\tbundle changes\treorders\trolls\twaves rolling\t")
	for _, s := range runs {
		rolling := "-"
		if s.Cadence.fleet != nil {
			rolling = fmt.Sprintf("%d", s.MaxWavesRolling)
		}
		fmt.Fprintf(w, "%d %s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n",
			s.Cadence.ID, s.Cadence.Name, s.Settings, s.Days, s.Rotations, s.Handshakes, s.Failures,
			s.Unpropagated, s.MaxBundle, s.BundleChanges, s.Reorders, s.Rolls, rolling)
	}
	_ = w.Flush()
	b.WriteString(legend)
	return b.String()
}

const legend = `
handshakes    every day, every consumer (3; cadence 8: 200) x every leaf a peer presents, verified with crypto/x509
failures      a bundle that had already trusted the leaf's issuer rejected the leaf (must be 0)
unpropagated  the consumer still held a bundle rendered before the leaf's issuer entered it: the
              CA signed before consumers could see it (only pre-distribution, cadence 4, avoids it)
max bundle    most certificates in one rendered bundle
reorders      bundle changes with the same set of certificates in a new order
rolls         changes of the consumer Deployments' rotate-certs.dev/trust-hash annotation (restarts)
waves rolling most renders whose rolls were rolling out on one day (restart.waves; a roll rolls out
              within the pick-up lag): 1 means no wave started before the previous one was done
`
