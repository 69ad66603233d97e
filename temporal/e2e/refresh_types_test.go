package e2e

import (
	"testing"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
)

// TestRefreshAllTypes sends every column type through the refresh path
// (capture's row images → .upserts and rewritten table files) with edge
// values: after a pair and after a rewrite, the snapshot read through its
// chain equals the live table, value for value. It also refreshes a table
// keyed by a UNIQUE NOT NULL index instead of a primary key.
func TestRefreshAllTypes(t *testing.T) {
	e := newBackupEnv(t)
	eng := newEngine(t)
	for _, q := range []string{
		"SET SESSION sql_mode = ''",
		`CREATE TABLE kinds (id INT PRIMARY KEY, biu BIGINT UNSIGNED, bi BIGINT, d DECIMAL(65,30), dbl DOUBLE,
		  dt DATETIME(6), ts TIMESTAMP(6) NULL, tm TIME(6), y YEAR, bn BINARY(8), vb VARBINARY(20), b64 BIT(64), b3 BIT(3),
		  t TEXT, lat VARCHAR(10) CHARACTER SET latin1, e ENUM('a','b'), s SET('x','y'), j JSON, u UUID, ip INET6, bl BLOB)`,
		`INSERT INTO kinds (id) VALUES (1), (2), (3)`,
		`CREATE TABLE uk (code VARCHAR(8) NOT NULL, n INT, UNIQUE KEY (code))`,
		`INSERT INTO uk VALUES ('a', 1), ('b', 2), ('c', 3)`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	e.waitCaughtUp(t)
	e.fullBackup(t)
	edge := []string{
		`UPDATE kinds SET biu = 18446744073709551615, bi = -9223372036854775808, d = '-12345678901234567890123456789012345.123456789012345678901234567890',
		   dbl = 1.7976931348623157e308, dt = '0000-00-00 00:00:00', ts = '2038-01-19 03:14:07.999999', tm = '-838:59:59', y = 2155,
		   bn = X'6162000000000000', vb = X'00FF00', b64 = X'FFFFFFFFFFFFFFFF', b3 = b'101',
		   t = 'quote '' backslash \\ newline \n emoji 😀', lat = 'café', e = 'b', s = 'x,y', j = '{"n": 18446744073709551616}',
		   u = '123e4567-e89b-12d3-a456-426614174000', ip = '::ffff:1.2.3.4', bl = X'000102' WHERE id = 1`,
		`UPDATE kinds SET biu = 0, bi = 0, d = 0, dbl = -0.0, dt = '2026-11-29 08:00:00.000001', tm = '00:00:00', y = 0, bn = X'', vb = X'',
		   b64 = b'0', b3 = b'0', t = '', lat = '', e = '', s = '', j = '[]', u = '00000000-0000-0000-0000-000000000000', ip = '::', bl = X'' WHERE id = 2`,
		`INSERT INTO kinds SELECT 4, biu, bi, d, dbl, dt, ts, tm, y, bn, vb, b64, b3, t, lat, e, s, j, u, ip, bl FROM kinds WHERE id = 1`,
		`DELETE FROM kinds WHERE id = 3`,
		`UPDATE kinds SET id = 10 WHERE id = 2`,
		`UPDATE uk SET code = 'z' WHERE code = 'a'`,
		`UPDATE uk SET n = NULL WHERE code = 'b'`,
		`DELETE FROM uk WHERE code = 'c'`,
		`INSERT INTO uk VALUES ('c', 33)`,
	}
	for _, q := range edge {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	e.waitCaughtUp(t)
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if res.Refused {
		t.Fatalf("refused: %v", res.Reasons)
	}
	snap := e.current(t)
	for _, name := range []string{"kinds", "uk"} {
		if mt, _ := snap.Manifest.Table("app", name); mt.Origin != snapshot.OriginPair {
			t.Fatalf("%s: origin %s, want a pair", name, mt.Origin)
		}
	}
	checkLive(t, e, eng, snap, "pair")
	// The same changes folded into new table files.
	_, err := e.src.ExecContext(e.ctx, `UPDATE kinds SET t = CONCAT(t, '!') WHERE id IN (1, 4)`)
	must(t, err)
	e.waitCaughtUp(t)
	res = e.refresh(t, payload.RefreshInput{TableDeltas: false})
	snap = e.current(t)
	if mt, _ := snap.Manifest.Table("app", "kinds"); mt.Origin != snapshot.OriginRewritten {
		t.Fatalf("kinds: origin %s, want rewritten", mt.Origin)
	}
	checkLive(t, e, eng, snap, "rewrite")
}
