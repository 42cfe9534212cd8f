package report

// StatusAt exposes statusAt to the external tests.
var StatusAt = statusAt
