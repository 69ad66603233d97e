package sqlport

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"os"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/testsuite"
)

// TestPortTLS: with --tls-cert/--tls-key a client may connect with TLS;
// with TLS required (as on a listen address not loopback) a connection
// without it is refused with error 3159 before it is logged in; a listen
// address not loopback without TLS is refused before anything listens.
func TestPortTLS(t *testing.T) {
	certs, err := testsuite.NewCerts(t.TempDir(), "sqlport")
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	if err := gomysql.RegisterTLSConfig("sqlport-test", &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}); err != nil {
		t.Fatal(err)
	}
	withTLS := func(require bool) func(*Config) {
		return func(c *Config) { c.TLSCert, c.TLSKey, c.RequireTLS = certs.ServerCert, certs.ServerKey, require }
	}
	count := func(db *sql.DB) (int, error) {
		var n int
		err := db.QueryRow("SELECT count(*) FROM shop.orders WHERE id > ?", 0).Scan(&n)
		return n, err
	}
	for _, require := range []bool{false, true} {
		addr := startPortCfg(t, withTLS(require), ordersTable)
		secure := openDSN(t, addr, "tls=sqlport-test")
		if n, err := count(secure); err != nil || n != 3 {
			t.Errorf("require %t: over TLS: %d rows, %v", require, n, err)
		}
		plain := openDSN(t, addr, "tls=false")
		n, err := count(plain)
		var my *gomysql.MySQLError
		switch {
		case !require && (err != nil || n != 3):
			t.Errorf("TLS offered, not required: without TLS: %d rows, %v", n, err)
		case require && (!errors.As(err, &my) || my.Number != erSecureTransportRequired):
			t.Errorf("TLS required: without TLS: %d rows, %v; want error %d", n, err, erSecureTransportRequired)
		}
	}
	for _, c := range []Config{
		{Addr: "0.0.0.0:0", TokenFile: "unused"},
		{Addr: "127.0.0.1:0", TokenFile: "unused", TLSCert: certs.ServerCert},
		{Addr: "127.0.0.1:0", TokenFile: "unused", RequireTLS: true},
	} {
		p, err := Listen(c)
		if err == nil {
			p.Close()
			t.Errorf("%+v: listened", c)
		} else if !strings.Contains(err.Error(), "tls") && !strings.Contains(err.Error(), "TLS") {
			t.Errorf("%+v: %v, want an error about TLS", c, err)
		}
	}
}
