package main

import (
	"errors"
	"fmt"

	"github.com/jetrpc/jetrpc/handler"
	"github.com/jetrpc/jetrpc/handler/auth"
	"github.com/jetrpc/jetrpc/handler/httprules"
)

// defaultVHosts is --vhosts when none is given: like geth, a server on
// loopback answers browsers only under the name localhost (and IP
// addresses), which defeats DNS rebinding.
var defaultVHosts = []string{"localhost"}

// access completes the engine's HTTP policy and connection filter from
// the access flags: --cors, --cors-header, --cors-max-age, --vhosts,
// --vhosts-strict, --health-path and --auth-optional are bound to its
// fields already;
// here --vhosts gets its default, and --jwt-secret, --api-keys,
// --trusted-proxy, --allow-ip and --deny-ip become its Authorize,
// TrustedProxies and AcceptConn — reading the secret and key files now,
// so that a bad file fails before serving.
func (c *serveFlags) access() error {
	p := &c.engine.HTTPPolicy
	if len(p.Hosts) == 0 {
		p.Hosts = defaultVHosts
	}
	var authorizers []handler.Authorizer
	if c.apiKeys != "" {
		keys, err := auth.LoadKeys(c.apiKeys)
		if err != nil {
			return err
		}
		if keys.Len() == 0 {
			return errors.New("--api-keys " + c.apiKeys + ": no key in the file")
		}
		authorizers = append(authorizers, keys.Authorize)
	}
	if c.jwtSecret != "" {
		secret, err := auth.LoadJWTSecret(c.jwtSecret)
		if err != nil {
			return err
		}
		authorizers = append(authorizers, auth.NewJWT(secret, handler.Grants{"*"}).Authorize)
	}
	switch {
	case len(authorizers) > 0:
		p.Authorize = auth.Any(authorizers...)
	case p.AuthOptional:
		return errors.New("--auth-optional: no credentials to make optional (give --api-keys or --jwt-secret)")
	}
	if len(c.trustedProxies) > 0 {
		proxies, err := httprules.ParseProxies(c.trustedProxies...)
		if err != nil {
			return fmt.Errorf("--trusted-proxy: %w", err)
		}
		p.TrustedProxies = proxies
	}
	if len(c.allowIP) > 0 || len(c.denyIP) > 0 {
		f, err := auth.NewIPFilter(c.allowIP, c.denyIP)
		if err != nil {
			return err
		}
		c.engine.AcceptConn = f.Allowed
	}
	return nil
}
