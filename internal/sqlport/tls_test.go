package sqlport

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/testsuite"
)

// TestPortTLS: with --tls-cert/--tls-key a client may connect with TLS,
// and users log in with caching_sha2_password (go-sql-driver, the mariadb
// client);
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
		// A plain connection first: caching_sha2_password's full
		// authentication without TLS (the password RSA-encrypted).
		plain := openDSN(t, addr, "tls=false&allowNativePasswords=false")
		n, err := count(plain)
		var my *gomysql.MySQLError
		switch {
		case !require && (err != nil || n != 3):
			t.Errorf("TLS offered, not required: without TLS: %d rows, %v", n, err)
		case require && (!errors.As(err, &my) || my.Number != erSecureTransportRequired):
			t.Errorf("TLS required: without TLS: %d rows, %v; want error %d", n, err, erSecureTransportRequired)
		}
		// allowNativePasswords=false: only caching_sha2_password logs in.
		secure := openDSN(t, addr, "tls=sqlport-test&allowNativePasswords=false")
		if n, err := count(secure); err != nil || n != 3 {
			t.Errorf("require %t: over TLS: %d rows, %v", require, n, err)
		}
		wrong, err := sql.Open("mysql", "viewer:wrong@tcp("+addr+")/shop?tls=sqlport-test")
		if err != nil {
			t.Fatal(err)
		}
		if err := wrong.Ping(); !errors.As(err, &my) || my.Number != 1045 {
			t.Errorf("a wrong password over TLS: %v, want error 1045", err)
		}
		wrong.Close()
		// The mariadb client over TLS, twice: full authentication, then
		// the cache's fast one.
		host, port, _ := strings.Cut(addr, ":")
		for i := 0; i < 2; i++ {
			out, err := exec.Command("mariadb", "-h", host, "-P", port, "-u", "viewer", "-p"+testSecret, "--ssl", "--ssl-ca", certs.CA,
				"--batch", "--skip-column-names", "-e", "SELECT count(*) FROM shop.orders").CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "3" {
				t.Errorf("require %t: mariadb over TLS (%d): %v: %s", require, i, err, out)
			}
		}
	}
	addr := startPortCfg(t, func(*Config) {}, ordersTable)
	if n, err := count(openDSN(t, addr, "allowNativePasswords=false")); err == nil {
		t.Errorf("without TLS the port's users are not mysql_native_password ones: %d rows", n)
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
