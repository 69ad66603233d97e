package sqlport

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/dbtrail/dbtrail/api"
)

// erSecureTransportRequired is MySQL's ER_SECURE_TRANSPORT_REQUIRED.
const erSecureTransportRequired = 3159

// transport loads the port's TLS (api.LoadTLS: nil without files) and
// checks the listen address: a loopback address, or any other with TLS,
// which every connection must then use (requireTLS, as with
// Config.RequireTLS), so that no password exchange and no answer crosses
// a network in clear.
func transport(cfg Config) (tc *tls.Config, requireTLS bool, err error) {
	loop, err := api.IsLoopback(cfg.Addr)
	if err != nil {
		return nil, false, err
	}
	if tc, err = api.LoadTLS(cfg.TLSCert, cfg.TLSKey); err != nil {
		return nil, false, err
	}
	if !loop && tc == nil {
		return nil, false, fmt.Errorf("listen address %s is not loopback: the port listens beyond this machine only with TLS (--tls-cert and --tls-key), so that passwords and answers do not cross a network in clear", cfg.Addr)
	}
	if cfg.RequireTLS && tc == nil {
		return nil, false, fmt.Errorf("TLS is required but there is no certificate: give --tls-cert and --tls-key")
	}
	return tc, !loop || cfg.RequireTLS, nil
}

// OnAuthSuccess refuses a connection that did not switch to TLS when the
// port requires it (error 3159, before the OK: the client is not logged
// in).
func (u users) OnAuthSuccess(c *server.Conn) error {
	if !u.requireTLS {
		return nil
	}
	if _, ok := c.Conn.Conn.(*tls.Conn); ok {
		return nil
	}
	return mysql.NewError(erSecureTransportRequired, "Connections using insecure transport are prohibited: this port listens beyond loopback and requires TLS (go-sql-driver: tls=true or a registered config; mariadb: --ssl)")
}

// authMethod is the users' authentication plugin: with TLS,
// caching_sha2_password (MySQL 8's default: the first login of a user
// sends the password over TLS, or RSA-encrypted with key, a new key of the
// port's, on a connection without TLS; later logins prove it against the
// port's cache of its hash); without TLS, mysql_native_password, which
// every client speaks on a plain connection (the mariadb client's RSA
// exchange is not the one go-mysql's server takes).
func authMethod(tc *tls.Config) (method string, key *rsa.PrivateKey, err error) {
	if tc == nil {
		return mysql.AUTH_NATIVE_PASSWORD, nil, nil
	}
	if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		return "", nil, fmt.Errorf("RSA key of caching_sha2_password: %w", err)
	}
	return mysql.AUTH_CACHING_SHA2_PASSWORD, key, nil
}
