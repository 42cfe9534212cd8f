package inventory

// ScanTargets exposes scanTargets to the external tests.
var ScanTargets = scanTargets

// ReadsWith exposes readsWith to the external tests.
var ReadsWith = readsWith
