package alerts

// FiringTimes exposes firingTimes to the external tests.
var FiringTimes = firingTimes
