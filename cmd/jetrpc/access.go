package main

import (
	"errors"
	"fmt"

	"github.com/jetrpc/jetrpc/engine"
	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/handler/httprules"
)

// defaultVHosts is --vhosts when none is given: like geth, a server on
// loopback answers browsers only under the name localhost (and IP
// addresses), which defeats DNS rebinding.
var defaultVHosts = []string{"localhost"}

// access turns the access flags (--cors, --cors-headers, --cors-max-age,
// --vhosts, --vhosts-strict, --health-path, --jwt-secret, --api-keys,
// --trusted-proxy, --allow-ip, --deny-ip) into engine options — the
// HTTP policy whole (handler.HTTPPolicy) and the connection filter —
// reading the secret and key files now, so that a bad file fails before
// serving.
func (c *serveFlags) access() ([]engine.Option, error) {
	p := handler.HTTPPolicy{
		HealthPath:  c.healthPath,
		CORS:        httprules.CORS{Origins: c.origins, Headers: c.corsHeaders, MaxAge: c.corsMaxAge},
		Hosts:       c.vhosts,
		StrictHosts: c.vhostsStrict,
	}
	if len(p.Hosts) == 0 {
		p.Hosts = defaultVHosts
	}
	var authorizers []handler.Authorizer
	if c.apiKeys != "" {
		keys, err := auth.LoadKeys(c.apiKeys)
		if err != nil {
			return nil, err
		}
		if keys.Len() == 0 {
			return nil, errors.New("--api-keys " + c.apiKeys + ": no key in the file")
		}
		authorizers = append(authorizers, keys.Authorize)
	}
	if c.jwtSecret != "" {
		secret, err := auth.LoadJWTSecret(c.jwtSecret)
		if err != nil {
			return nil, err
		}
		authorizers = append(authorizers, auth.NewJWT(secret, handler.Grants{"*"}).Authorize)
	}
	if len(authorizers) > 0 {
		p.Authorize = auth.Any(authorizers...)
	}
	if len(c.trustedProxies) > 0 {
		proxies, err := handler.ParseProxies(c.trustedProxies...)
		if err != nil {
			return nil, fmt.Errorf("--trusted-proxy: %w", err)
		}
		p.TrustedProxies = proxies
	}
	opts := []engine.Option{engine.WithHTTPPolicy(p)}
	if len(c.allowIP) > 0 || len(c.denyIP) > 0 {
		f, err := auth.NewIPFilter(c.allowIP, c.denyIP)
		if err != nil {
			return nil, err
		}
		opts = append(opts, engine.WithAcceptConn(f.Allowed))
	}
	return opts, nil
}
