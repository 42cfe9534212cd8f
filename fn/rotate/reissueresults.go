package rotate

import (
	"fmt"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/why"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// reissueResults turns the re-issue list into KRM results on each
// certificate's resource: a warning when the CA it needs leaves the bundle
// before the certificate expires (or has already gone, or stays only for
// it), an info when the certificate expires first and only its renewal
// needs watching.
func reissueResults(rs []why.Reissue) framework.Results {
	var out framework.Results
	for _, x := range rs {
		what := "leaf"
		if x.IsCA {
			what = "CA certificate"
		}
		issuer := fmt.Sprintf("%q", x.Issuer)
		if x.IssuerSHA256 != "" {
			issuer += fmt.Sprintf(" (sha256:%s)", shortSHA(x.IssuerSHA256))
		}
		cert := fmt.Sprintf("%s %q sha256:%s", what, x.Subject, shortSHA(x.SHA256))
		leaves := x.IssuerLeavesAt.UTC().Format(time.RFC3339)
		var sev framework.Severity = framework.Warning
		var msg string
		switch {
		case x.State == why.ReissueBroken:
			gone := fmt.Sprintf("which is no longer in trust bundle %q", x.Bundle)
			if x.IssuerExpired {
				gone = "which expired on " + leaves
			} else if x.DaysLeft < 0 {
				gone += " (since " + leaves + ")"
			}
			msg = fmt.Sprintf("%s needs %s, %s: it verifies against nothing the bundle trusts, and peers that trust only this bundle reject it - re-issue it from a current CA now",
				cert, issuer, gone)
		case x.State == why.ReissueProtected:
			msg = fmt.Sprintf("%s chains only to %s, a previous CA of bundle %q, which the retain policy would have dropped on %s and which stays only for it (retain.protectIssuers); re-issue it from a current CA so the old CA can go",
				cert, issuer, x.Bundle, leaves)
		case !x.NotAfter.After(x.IssuerLeavesAt):
			sev = framework.Info
			msg = fmt.Sprintf("%s chains only to %s, a previous CA of bundle %q, which stays in the bundle until %s; the %s expires first (%s) - make sure its renewal comes from a current CA",
				cert, issuer, x.Bundle, leaves, what, x.NotAfter.UTC().Format(time.RFC3339))
		default:
			msg = fmt.Sprintf("%s chains only to %s, a previous CA of bundle %q, which leaves the bundle on %s (%d days); re-issue it from a current CA before then",
				cert, issuer, x.Bundle, leaves, x.DaysLeft)
		}
		if x.Certificate != "" {
			msg += fmt.Sprintf(". cert-manager Certificate %s writes it: %s", x.Certificate, x.Command)
		}
		out = append(out, x.Resource.Result(sev, x.Key, msg))
	}
	return out
}

// shortSHA is the first 12 hex digits of a SHA-256, "-" for none.
func shortSHA(sha string) string {
	if len(sha) < 12 {
		return "-"
	}
	return sha[:12]
}
