package krmio

// WriteResultsForTest exposes writeResults to the external tests.
var WriteResultsForTest = writeResults
