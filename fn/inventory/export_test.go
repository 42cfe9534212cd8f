package inventory

// ScanTargets exposes scanTargets to the external tests.
var ScanTargets = scanTargets
