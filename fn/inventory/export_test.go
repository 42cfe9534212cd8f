package inventory

// ReadsWith exposes readsWith to the external tests.
var ReadsWith = readsWith
