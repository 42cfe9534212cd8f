package policy

import (
	"fmt"

	"github.com/rotate-certs/rotate-certs/fn/kube"
)

// Defaults of target.additionalFormats.
const (
	// defaultPKCS12Key is the data key of the PKCS#12 truststore.
	defaultPKCS12Key = "truststore.p12"
	// defaultJKSKey is the data key of the JKS truststore.
	defaultJKSKey = "truststore.jks"
	// defaultJKSPassword is Java's conventional truststore password; a JKS
	// store always has one (it keys the integrity digest).
	defaultJKSPassword = "changeit"
	// defaultPKCS12Password is empty: an unencrypted, MAC-less PKCS#12
	// truststore, which Java reads without a password.
	defaultPKCS12Password = ""
)

// AdditionalFormats asks for binary truststores written next to the PEM
// bundle, in the same target object, for runtimes (Java above all) that do
// not read PEM. They hold the same certificates as the PEM key and are
// byte-stable: an unchanged set renders to unchanged bytes.
type AdditionalFormats struct {
	// PKCS12 writes a PKCS#12 truststore.
	PKCS12 *TruststoreFormat `json:"pkcs12,omitempty"`
	// JKS writes a Java KeyStore truststore.
	JKS *TruststoreFormat `json:"jks,omitempty"`
}

// TruststoreFormat is where one binary truststore goes and how it is
// protected. The password is written in the policy in clear text: a
// truststore holds public certificates, and its password only guards
// integrity (it is the password the consuming application is configured
// with, not a secret of rotate-certs).
type TruststoreFormat struct {
	// Key is the data key (Secret data / ConfigMap binaryData); default
	// truststore.p12 or truststore.jks.
	Key string `json:"key,omitempty"`
	// Password of the store; default "" for PKCS#12 (no encryption, no
	// MAC) and "changeit" for JKS.
	Password *string `json:"password,omitempty"`
}

// PasswordValue returns the password, "" when unset.
func (f *TruststoreFormat) PasswordValue() string {
	if f == nil || f.Password == nil {
		return ""
	}
	return *f.Password
}

// setDefaults fills unset keys and passwords. It is safe on a nil receiver.
func (a *AdditionalFormats) setDefaults() {
	if a == nil {
		return
	}
	a.PKCS12.defaults(defaultPKCS12Key, defaultPKCS12Password)
	a.JKS.defaults(defaultJKSKey, defaultJKSPassword)
}

func (f *TruststoreFormat) defaults(key, password string) {
	if f == nil {
		return
	}
	if f.Key == "" {
		f.Key = key
	}
	if f.Password == nil {
		f.Password = &password
	}
}

// validate checks the formats of target t at path (".target").
func (a *AdditionalFormats) validate(t Target, path string) FieldErrors {
	var errs FieldErrors
	if a == nil {
		return nil
	}
	seen := map[string]string{t.Key: path + ".key"}
	for _, f := range []struct {
		name string
		fmt  *TruststoreFormat
	}{{"pkcs12", a.PKCS12}, {"jks", a.JKS}} {
		if f.fmt == nil {
			continue
		}
		kp := fmt.Sprintf("%s.additionalFormats.%s.key", path, f.name)
		k := f.fmt.Key
		switch {
		case !errs.checkDataKey(kp, k):
		case seen[k] != "":
			errs.add(kp, "%q is also written by %s; each format needs its own key", k, seen[k])
		default:
			seen[k] = kp
		}
	}
	if a.JKS != nil && a.JKS.PasswordValue() == "" {
		errs.add(path+".additionalFormats.jks.password", "must not be empty: a JKS store is always keyed by a password (omit the field for %q)", defaultJKSPassword)
	}
	return errs
}

// Keys returns every data key the target writes: the PEM key, then the
// keys of the additional formats.
func (t Target) Keys() []string {
	keys := []string{t.Key}
	if a := t.AdditionalFormats; a != nil {
		if a.PKCS12 != nil {
			keys = append(keys, a.PKCS12.Key)
		}
		if a.JKS != nil {
			keys = append(keys, a.JKS.Key)
		}
	}
	return keys
}

// validateFormatKeys reports two bundles writing the same key of the same
// object where at least one of the two writes is an additional format
// (Validate already reports clashes of PEM keys), and a source that reads
// a key its own bundle writes as a truststore.
func validateFormatKeys(bundles []TrustBundle) FieldErrors {
	var errs FieldErrors
	type write struct {
		path   string
		format bool
	}
	written := map[string]write{}
	for i, b := range bundles {
		path := fmt.Sprintf("spec.trustBundles[%d].target", i)
		for j, key := range b.Target.Keys() {
			for _, ns := range b.Target.Namespaces {
				k := fmt.Sprintf("%s %s/%s key %s", b.Target.Kind, ns, b.Target.Name, key)
				w := write{path: path, format: j > 0}
				if other, dup := written[k]; dup && other.path != path && (w.format || other.format) {
					errs.add(path+".additionalFormats", "writes %s, which %s also writes", k, other.path)
				}
				written[k] = w
			}
			if j == 0 {
				continue
			}
			for si, s := range b.Sources {
				ref := s.Ref()
				if ref == nil || kube.TargetKind(s.Kind()) != b.Target.Kind || ref.Name != b.Target.Name || ref.Key != key {
					continue
				}
				for _, ns := range b.Target.Namespaces {
					if ns == ref.Namespace {
						errs.add(fmt.Sprintf("spec.trustBundles[%d].sources[%d]", i, si),
							"reads key %s of %s %s/%s, which this bundle writes as a truststore", key, b.Target.Kind, ns, b.Target.Name)
					}
				}
			}
		}
	}
	return errs
}
