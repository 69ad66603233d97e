package capture_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
	"github.com/dbtrail/dbtrail/internal/types"
)

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
		vals := make([]types.Cell, len(raw))
		for i, r := range raw {
			vals[i] = types.RawCell(bytes.Clone(r))
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
	create, rows := exporttest.AllTypesTable()
	e.exec("SET SESSION sql_mode = ''", create, "INSERT INTO alltypes VALUES "+strings.Join(rows, ","))
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
	if want := 2*len(rows) + 3; len(evs) != want {
		t.Fatalf("got %d events, want %d", len(evs), want)
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
	// The key-changing update (4 → 40) ends the history of key [4].
	old, err := e.store.KeyChanges(e.ctx, "main", "app", "alltypes", "[4]")
	if err != nil {
		t.Fatal(err)
	}
	if len(old) != 2 || old[0].Op != 'i' || old[1].Op != 'u' || old[1].PK != "[40]" || old[1].PKBefore != "[4]" {
		t.Fatalf("history of key [4]: %+v", old)
	}
	if t.Failed() {
		fmt.Println(p.output())
	}
}
