package inventory

import "github.com/rotate-certs/rotate-certs/fn/kube"

// A certificate is also kept as DER, unarmoured: a ConfigMap's binaryData
// (Java and Windows tooling write ca.der, ca.cer) or a Secret's ca.der.
// A value that is one DER certificate, and nothing else, is read as that
// certificate. Other DER - a private key, a PKCS #12 or JKS truststore, a
// CSR - is skipped as a PEM key is: none of the report's business, and a
// key is never parsed as one.

// looksLikeDER reports whether b is one DER SEQUENCE that fills it
// exactly, the outer shape of a DER certificate: a cheap test before
// parsing a binary value.
func looksLikeDER(b []byte) bool {
	if len(b) < 2 || b[0] != 0x30 {
		return false
	}
	n, head := int(b[1]), 2
	if n >= 0x80 {
		k := n & 0x7f
		if k == 0 || k > 4 || len(b) < 2+k {
			return false
		}
		n = 0
		for _, c := range b[2 : 2+k] {
			n = n<<8 | int(c)
		}
		head += k
	}
	return n == len(b)-head
}

// der records the certificate of a value that is one DER certificate; a
// value that does not parse as one is skipped.
func (s *scanner) der(ref func() kube.Ref, field string, data []byte) {
	cert, err := s.cache.Parse(data)
	if err != nil {
		return
	}
	s.inv.Certificates = append(s.inv.Certificates, Found{Ref: ref(), Field: field, Cert: cert})
}
