//go:build tools

// This file pins sigs.k8s.io/cluster-api, whose CRD files the test
// validates against; it is never compiled.
package crdschema

import _ "sigs.k8s.io/cluster-api/version"
