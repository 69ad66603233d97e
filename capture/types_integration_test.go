package capture_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/types"
)

// allTypesDDL has a column of every MariaDB type dbtrail maps.
const allTypesDDL = `CREATE TABLE alltypes (
  id INT NOT NULL PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  dec1 DECIMAL(65,30), dec2 DECIMAL(10,4) UNSIGNED, dec3 DECIMAL(5,0),
  f FLOAT, d DOUBLE, b1 BIT(1), b12 BIT(12), b64 BIT(64),
  dt DATE, dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP(6) NULL DEFAULT NULL, ts0 TIMESTAMP NULL DEFAULT NULL,
  tm TIME, tm6 TIME(6), y YEAR,
  c CHAR(10), vc VARCHAR(255), bn BINARY(8), vb VARBINARY(16),
  tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT,
  tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
  e ENUM('a','b','c'), s SET('x','y','z'), j JSON,
  u UUID, ip6 INET6, ip4 INET4, g GEOMETRY NULL,
  lat VARCHAR(20) CHARACTER SET latin1
) DEFAULT CHARSET=utf8mb4`

// allTypesRows are edge values: all NULL, minimums, maximums, and awkward ones.
var allTypesRows = []string{
	`(1, NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL, NULL,NULL,NULL, NULL,NULL,NULL,NULL,NULL,
	  NULL,NULL,NULL,NULL,NULL, NULL,NULL,NULL, NULL,NULL,NULL,NULL, NULL,NULL,NULL,NULL, NULL,NULL,NULL,NULL,
	  NULL,NULL,NULL, NULL,NULL,NULL,NULL, NULL)`,
	`(2, -128,0,-32768,0,-8388608,0,-2147483648,0,-9223372036854775808,0,
	  '-99999999999999999999999999999999999.999999999999999999999999999999','0.0000','-99999',
	  -3.40282e38,-1.7976931348623157e308, b'0', b'0', b'0',
	  '0000-00-00','0000-00-00 00:00:00','0000-00-00 00:00:00.000000','1970-01-01 00:00:01.000000','1970-01-01 00:00:01',
	  '-838:59:59','-838:59:59.000000',1901,
	  '','',X'',X'', '','','','', X'',X'',X'',X'',
	  '','','{}', '00000000-0000-0000-0000-000000000000','::','0.0.0.0', ST_GeomFromText('POINT(0 0)'), '')`,
	`(3, 127,255,32767,65535,8388607,16777215,2147483647,4294967295,9223372036854775807,18446744073709551615,
	  '99999999999999999999999999999999999.999999999999999999999999999999','999999.9999','99999',
	  3.40282e38,1.7976931348623157e308, b'1', b'111111111111', X'FFFFFFFFFFFFFFFF',
	  '9999-12-31','9999-12-31 23:59:59','9999-12-31 23:59:59.999999','2038-01-19 03:14:07.999999','2038-01-19 03:14:07',
	  '838:59:59','838:59:59.999999',2155,
	  'abcdefghij', CONCAT('max ', REPEAT('z', 200)), X'6162000000000000', X'00FF00FF00000000000000000000FF00',
	  REPEAT('t',255), REPEAT('x',1000), REPEAT('m',70000), REPEAT('L',100000),
	  X'00', X'0000FF', REPEAT(X'AB', 70000), REPEAT(X'00', 1000),
	  'c','x,y,z','{"n": 18446744073709551615, "big": 12345678901234567890123, "f": 1.5, "s": "é😀"}',
	  'ffffffff-ffff-ffff-ffff-ffffffffffff','ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff','255.255.255.255',
	  ST_GeomFromText('LINESTRING(0 0, 1 1, 2 5)'), 'ÿþ')`,
	`(4, -1,1,-1,1,-1,1,-1,1,-1,1,
	  '-0.000000000000000000000000000010','12.3400','-1',
	  1.17549435e-38, 2.2250738585072014e-308, b'0', b'100000000001', X'8000000000000001',
	  '2026-11-29','2026-11-29 08:15:00','2026-11-29 08:15:00.000001','2026-11-29 08:15:00.123456','2026-11-29 08:15:00',
	  '-00:00:01','-12:34:56.789012',2026,
	  'a b ', 'tab\there "quote" \\back\\slash \'single\' 😀 𝄞', X'0102', X'',
	  'emoji 😀🎉', 'line1\nline2\r\n\0nul', 'ü', '',
	  X'0A0D00', X'5C27', X'', X'FF',
	  'b','y','[1, 2.50, null, true, "x"]',
	  '123e4567-e89b-12d3-a456-426614174000','::ffff:1.2.3.4','10.0.0.1',
	  ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0))'), 'café')`,
}

// liveImages reads the table with SELECT and encodes each row the way
// capture encodes a binlog row, keyed by the canonical key.
func liveImages(t *testing.T, e *env, def *schema.Table) map[string]string {
	t.Helper()
	cols := make([]string, len(def.Columns))
	for i, c := range def.Columns {
		cols[i] = "`" + c.Name + "`"
		if c.Type == "float" {
			// MariaDB prints FLOAT with 6 digits; as DOUBLE the stored value is exact.
			cols[i] = "CAST(`" + c.Name + "` AS DOUBLE)"
		}
	}
	rows, err := e.src.QueryContext(e.ctx, "SELECT "+strings.Join(cols, ",")+" FROM "+def.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		raw := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		vals := make([][]byte, len(raw))
		for i, r := range raw {
			if r != nil {
				vals[i] = bytes.Clone(r)
			}
		}
		img, err := types.SQLImage(def, vals)
		if err != nil {
			t.Fatal(err)
		}
		key, err := types.KeyFromImage(def, img)
		if err != nil {
			t.Fatal(err)
		}
		out[key] = string(img)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func tableDef(t *testing.T, e *env, table string) *schema.Table {
	t.Helper()
	vers, err := e.store.LatestSchemas(e.ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vers {
		if v.Schema == "app" && v.Table == table && v.Definition != nil {
			return v.Definition
		}
	}
	t.Fatalf("no schema history for app.%s", table)
	return nil
}

func TestTypeRoundTrip(t *testing.T) {
	e := newEnv(t)
	p := e.startCapture()
	e.waitCaughtUp(p)
	e.exec("SET SESSION sql_mode = ''", allTypesDDL,
		"INSERT INTO alltypes VALUES "+strings.Join(allTypesRows, ","))
	e.waitCaughtUp(p)
	def := tableDef(t, e, "alltypes")
	afterInsert := liveImages(t, e, def)

	e.exec("SET SESSION sql_mode = ''",
		"UPDATE alltypes SET ti=5, vc='now set', bn=X'01', b64=b'0', j='{\"k\": 1}', u='00000000-0000-0000-0000-000000000001', ts='2000-01-01 00:00:00' WHERE id=1",
		"UPDATE alltypes SET biu=biu-1, dec1='1.5', tm6='-00:00:00.000001', dtm='0000-00-00 00:00:00' WHERE id=3",
		"UPDATE alltypes SET id=40, lat='ÀÉ' WHERE id=4")
	e.waitCaughtUp(p)
	afterUpdate := liveImages(t, e, def)
	e.exec("DELETE FROM alltypes")
	e.waitCaughtUp(p)

	evs := e.events("alltypes")
	if len(evs) != 4+3+4 {
		t.Fatalf("got %d events, want 11", len(evs))
	}
	for _, ev := range evs {
		switch ev.Op {
		case 'i':
			want := afterInsert[ev.PK]
			if string(ev.After) != want || ev.Before != nil {
				t.Errorf("insert %s:\n index %s\n live  %s", ev.PK, ev.After, want)
			}
		case 'u':
			before, err := types.KeyFromImage(def, ev.Before)
			if err != nil {
				t.Fatal(err)
			}
			if string(ev.Before) != afterInsert[before] {
				t.Errorf("update before %s:\n index %s\n live  %s", before, ev.Before, afterInsert[before])
			}
			if string(ev.After) != afterUpdate[ev.PK] {
				t.Errorf("update after %s:\n index %s\n live  %s", ev.PK, ev.After, afterUpdate[ev.PK])
			}
		case 'd':
			if string(ev.Before) != afterUpdate[ev.PK] || ev.After != nil {
				t.Errorf("delete %s:\n index %s\n live  %s", ev.PK, ev.Before, afterUpdate[ev.PK])
			}
		default:
			t.Errorf("unexpected op %q", ev.Op)
		}
	}
	if t.Failed() {
		fmt.Println(p.output())
	}
}
