package inventory

// Place is what kind of place holds a certificate: what a reader of
// trust needs to know of a value besides its field. The inventory says
// where; whether a value is trust is package trustdiff's decision, and who
// reads it restart.Readers'.
type Place uint8

const (
	// PlaceValue is a Secret or ConfigMap value: PEM, or one DER
	// certificate.
	PlaceValue Place = iota
	// PlaceTrustField is a field that holds trust and nothing else: a
	// caBundle, a ClusterTrustBundle's spec.trustBundle, a trust-manager
	// Bundle's inLine source.
	PlaceTrustField
	// PlaceClientCA is the CAs a client configuration kept in a Secret or
	// ConfigMap value trusts for its server: a kubeconfig's
	// certificate-authority-data, an Argo CD cluster Secret's
	// tlsClientConfig.caData.
	PlaceClientCA
	// PlaceClientCert is the certificate such a client configuration
	// presents: a kubeconfig's client-certificate-data, an Argo CD
	// cluster Secret's tlsClientConfig.certData.
	PlaceClientCert
	// PlaceEnv is the value of an env variable of a pod template's
	// container or init container (ScanAll).
	PlaceEnv
	// PlaceHelmValue is a value inside the Helm values of a Flux
	// HelmRelease or an Argo CD Application (ScanAll).
	PlaceHelmValue
)

// spot is where a value sits: its field, the place inside the value
// (Found.Within), what kind of place it is and the value's name
// (Found.Name).
type spot struct {
	field, within string
	place         Place
	name          string
}
