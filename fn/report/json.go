package report

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/rotate-certs/rotate-certs/fn/why"
)

// jsonSchemaVersion names the shape of RenderJSON's output. Fields may be
// added within a version; none is renamed, retyped or removed. (Added in
// v1: "packages", and "package" on every entry, re-issue and problem;
// "trust"; "isCA", "issuerExpired", "certificate" and "command" on every
// re-issue; "waves", the roll-outs of restarts in waves still to roll;
// "renewals", the cert-manager renewals of the CAs the bundles read,
// present only when there are some.)
const jsonSchemaVersion = "rotate-certs.dev/check/v1"

// jsonReport is the documented JSON schema (docs/reference/check.md).
type jsonReport struct {
	SchemaVersion     string        `json:"schemaVersion"`
	Now               string        `json:"now"`
	WarnWithinSeconds int64         `json:"warnWithinSeconds"`
	FailWithinSeconds int64         `json:"failWithinSeconds"`
	Failing           bool          `json:"failing"`
	Summary           Counts        `json:"summary"`
	Entries           []jsonEntry   `json:"entries"`
	Reissues          []jsonReissue `json:"reissues"`
	Trust             []jsonTrusted `json:"trust"`
	Problems          []jsonProblem `json:"problems"`
	Packages          []jsonPackage `json:"packages"`
	Waves             []jsonWaves   `json:"waves"`
	Renewals          []jsonRenewal `json:"renewals,omitempty"`
	// Domains are present when a bundle names a trust domain.
	Domains []jsonDomain `json:"domains,omitempty"`
}

// jsonPackage is a directory whose RotationPolicy applies to it and below.
type jsonPackage struct {
	Path     string         `json:"path"`
	Policies []jsonResource `json:"policies"`
}

type jsonResource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	File       string `json:"file,omitempty"`
}

type jsonEntry struct {
	Type        EntryType    `json:"type"`
	Package     string       `json:"package"`
	Resource    jsonResource `json:"resource"`
	Key         string       `json:"key"`
	Subject     string       `json:"subject"`
	Issuer      string       `json:"issuer,omitempty"`
	SHA256      string       `json:"sha256,omitempty"`
	IsCA        bool         `json:"isCA"`
	NotBefore   string       `json:"notBefore,omitempty"`
	NotAfter    string       `json:"notAfter"`
	Approximate bool         `json:"approximate,omitempty"`
	DaysLeft    int          `json:"daysLeft"`
	Status      Status       `json:"status"`
}

type jsonReissue struct {
	Package        string           `json:"package"`
	Resource       jsonResource     `json:"resource"`
	Key            string           `json:"key"`
	Subject        string           `json:"subject"`
	SHA256         string           `json:"sha256"`
	IsCA           bool             `json:"isCA"`
	NotAfter       string           `json:"notAfter"`
	Bundle         string           `json:"bundle"`
	Issuer         string           `json:"issuer"`
	IssuerSHA256   string           `json:"issuerSha256"`
	IssuerExpired  bool             `json:"issuerExpired"`
	IssuerLeavesAt string           `json:"issuerLeavesAt"`
	DaysLeft       int              `json:"daysLeft"`
	State          why.ReissueState `json:"state"`
	Certificate    *jsonRef         `json:"certificate,omitempty"`
	Command        string           `json:"command,omitempty"`
}

// jsonRef names a cert-manager Certificate.
type jsonRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// jsonTrusted is one CA of one bundle and why the bundle holds it.
type jsonTrusted struct {
	Package   string          `json:"package"`
	Bundle    string          `json:"bundle"`
	Target    string          `json:"target"`
	Targets   int             `json:"targets"`
	Subject   string          `json:"subject"`
	SHA256    string          `json:"sha256"`
	NotAfter  string          `json:"notAfter"`
	Reason    why.TrustReason `json:"reason"`
	Source    string          `json:"source,omitempty"`
	RetiredAt string          `json:"retiredAt,omitempty"`
	Verdict   string          `json:"verdict,omitempty"`
	Detail    string          `json:"detail"`
	LeavesAt  string          `json:"leavesAt,omitempty"`
	ChainedBy []string        `json:"chainedBy"`
}

type jsonProblem struct {
	Package  string       `json:"package"`
	Resource jsonResource `json:"resource"`
	Key      string       `json:"key,omitempty"`
	Message  string       `json:"message"`
}

// RenderJSON renders the report in the stable schema jsonSchemaVersion:
// lists are never null, times are RFC 3339 UTC, durations whole seconds.
func RenderJSON(r Report) ([]byte, error) {
	out := jsonReport{
		SchemaVersion:     jsonSchemaVersion,
		Now:               stamp(r.now),
		WarnWithinSeconds: int64(r.warnWithin / time.Second),
		FailWithinSeconds: int64(r.failWithin / time.Second),
		Failing:           r.Failing(),
		Summary:           r.Counts(),
		Entries:           []jsonEntry{},
		Reissues:          []jsonReissue{},
		Trust:             []jsonTrusted{},
		Problems:          []jsonProblem{},
		Packages:          []jsonPackage{},
		Waves:             wavesJSON(r.Waves),
		Renewals:          renewalsJSON(r),
		Domains:           domainsJSON(r.Domains),
	}
	for _, p := range r.Packages {
		jp := jsonPackage{Path: p.Path, Policies: []jsonResource{}}
		for _, pol := range p.Policies {
			jp.Policies = append(jp.Policies, resource(pol))
		}
		out.Packages = append(out.Packages, jp)
	}
	for _, e := range r.Entries {
		je := jsonEntry{Type: e.Type, Package: e.pkg, Resource: resource(e.Resource), Key: e.key, Subject: e.subject, SHA256: e.sha256,
			IsCA: e.isCA, NotAfter: stamp(e.notAfter), Approximate: e.approximate, DaysLeft: e.DaysLeft, Status: e.Status}
		if e.Type == typeCertificate {
			je.Issuer = e.issuer
			je.NotBefore = stamp(e.notBefore)
		}
		out.Entries = append(out.Entries, je)
	}
	for _, x := range r.reissues {
		jr := jsonReissue{Package: x.Package, Resource: resource(x.Resource), Key: x.Key, Subject: x.Subject, SHA256: x.SHA256, IsCA: x.IsCA,
			NotAfter: stamp(x.NotAfter), Bundle: x.Bundle, Issuer: x.Issuer, IssuerSHA256: x.IssuerSHA256, IssuerExpired: x.IssuerExpired,
			IssuerLeavesAt: stamp(x.IssuerLeavesAt), DaysLeft: x.DaysLeft, State: x.State, Command: x.Command}
		if ns, name, ok := strings.Cut(x.Certificate, "/"); ok {
			jr.Certificate = &jsonRef{Namespace: ns, Name: name}
		}
		out.Reissues = append(out.Reissues, jr)
	}
	for _, x := range r.trust {
		out.Trust = append(out.Trust, jsonTrusted{Package: x.Package, Bundle: x.Bundle, Target: x.Target.String(), Targets: x.Targets, Subject: x.Subject,
			SHA256: x.SHA256, NotAfter: stamp(x.NotAfter), Reason: x.Reason, Source: x.Source, RetiredAt: trustStamp(x.RetiredAt),
			Verdict: x.Verdict, Detail: trustDetail(x), LeavesAt: trustStamp(x.LeavesAt), ChainedBy: append([]string{}, x.ChainedBy...)})
	}
	for _, p := range r.Problems {
		out.Problems = append(out.Problems, jsonProblem{Package: p.pkg, Resource: resource(p.resource), Key: p.key, Message: p.message})
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func resource(r kube.Ref) jsonResource {
	return jsonResource{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, File: r.File()}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
