package report

import (
	"fmt"
	"time"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// ReissueResults turns the re-issue list into KRM results on each leaf's
// resource: a warning when the issuer leaves the bundle before the leaf
// expires (or has already gone, or stays only for this leaf), an info when
// the leaf expires first and only its renewal needs watching.
func ReissueResults(rs []Reissue) framework.Results {
	var out framework.Results
	for _, x := range rs {
		leaf := fmt.Sprintf("leaf %q sha256:%s is signed by %q (sha256:%s), a previous CA of bundle %q",
			x.Subject, short(x.SHA256), x.Issuer, short(x.IssuerSHA256), x.Bundle)
		leaves := x.IssuerLeavesAt.UTC().Format(time.RFC3339)
		var sev framework.Severity = framework.Warning
		var msg string
		switch {
		case x.State == ReissueDropped:
			msg = fmt.Sprintf("%s, which left the bundle in this render (%s); peers that trust only this bundle reject the leaf - re-issue it from a current CA now", leaf, leaves)
		case x.State == ReissueProtected:
			msg = fmt.Sprintf("%s, which the retain policy would have dropped on %s and which stays only for this leaf (retain.protectIssuers); re-issue the leaf from a current CA so the old CA can go", leaf, leaves)
		case !x.NotAfter.After(x.IssuerLeavesAt):
			sev = framework.Info
			msg = fmt.Sprintf("%s, which stays in the bundle until %s; the leaf expires first (%s) - make sure its renewal comes from a current CA",
				leaf, leaves, x.NotAfter.UTC().Format(time.RFC3339))
		default:
			msg = fmt.Sprintf("%s, which leaves the bundle on %s (%d days); re-issue the leaf from a current CA before then", leaf, leaves, x.DaysLeft)
		}
		out = append(out, x.Resource.Result(sev, x.Key, msg))
	}
	return out
}
