package handler

// MaxInterceptors is maxInterceptors, for the external tests of Use.
const MaxInterceptors = maxInterceptors
