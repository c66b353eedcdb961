package auth

import "time"

// SetNow makes j read the time from now, for tests.
func SetNow(j *JWT, now func() time.Time) { j.now = now }

// ParseKeys is parseKeys, for tests and fuzzing.
var ParseKeys = parseKeys

// ParseJWTSecret is parseJWTSecret, for tests and fuzzing.
var ParseJWTSecret = parseJWTSecret
