package views

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	itemsCols  = "id, name, qty"
	itemsEmpty = "SELECT 0::INT AS id, ''::VARCHAR AS name, 0::INT AS qty WHERE false"
	compCols   = "id, s"
	compEmpty  = "SELECT 0::INT AS id, ''::VARCHAR AS s WHERE false"
	kvEmpty    = "SELECT 0::INT AS k, ''::VARCHAR AS v WHERE false"
	weirdCols  = `id, "col ""q"""`
	weirdEmpty = `SELECT 0::INT AS id, ''::VARCHAR AS "col ""q""" WHERE false`
	okTable    = `o'k*[1]?`
)

// buildA writes the first snapshot: every kind of chain the views read.
func buildA(s snap) {
	// Integer key: updates, deletes, a key changed in two refreshes, a
	// deleted key inserted again.
	s.put("shop/items.parquet", values(itemsCols, "1,'apple',10", "2,'pear',20", "3,'plum',30",
		"4,'fig',40", "5,'kiwi',50", "6,'lime',60"))
	s.chainStart("shop", "items", itemsCols, itemsEmpty)
	s.posdel("shop", "items", "000001", 1, 2, 4)
	s.upserts("shop", "items", "000001", itemsCols, "", "2,'pear',21,'2','u'", "3,'plum',31,'3','u'",
		"5,'kiwi',50,'5','d'", "7,'date',70,'7','u'")
	s.posdel("shop", "items", "000002", 2)
	s.upserts("shop", "items", "000002", itemsCols, "", "3,'plum',32,'3','u'", "NULL,NULL,NULL,'7','d'",
		"8,'yuzu',80,'8','u'")
	s.posdel("shop", "items", "000003")
	s.upserts("shop", "items", "000003", itemsCols, "", "5,'kiwi',55,'5','u'", "7,'date',77,'7','u'")

	// String key.
	s.put("shop/users.parquet", values("email, n", "'a@x',1", "'b@x',2", "'c''q@x',3"))
	s.chainStart("shop", "users", "email, n", "SELECT ''::VARCHAR AS email, 0::INT AS n WHERE false")
	s.posdel("shop", "users", "000001", 0, 1)
	s.upserts("shop", "users", "000001", "email, n", "", "'a@x',11,'a@x','u'", "NULL,NULL,'b@x','d'",
		"'d@x',4,'d@x','u'")

	// Composite key.
	s.put("shop/pairs.parquet", values("a, b, v", "7,'abc',1", "7,'abd',2", "8,'abc',3"))
	s.chainStart("shop", "pairs", "a, b, v", "SELECT 0::INT AS a, ''::VARCHAR AS b, 0::INT AS v WHERE false")
	s.posdel("shop", "pairs", "000001", 0, 2)
	s.upserts("shop", "pairs", "000001", "a, b, v", "", `7,'abc',10,'[7,"abc"]','u'`,
		`8,'abc',NULL,'[8,"abc"]','d'`, `9,'x',5,'[9,"x"]','u'`)
	s.posdel("shop", "pairs", "000002", 0)
	s.upserts("shop", "pairs", "000002", "a, b, v", "", `7,'abc',100,'[7,"abc"]','u'`)

	// A compacted range pair, then later pairs (no plain 000000 pair).
	s.put("shop/compacted.parquet", values(compCols, "1,'o1'", "2,'o2'", "3,'o3'", "4,'o4'", "5,'o5'"))
	s.posdel("shop", "compacted", "000000-000014", 0, 1, 2)
	s.upserts("shop", "compacted", "000000-000014", compCols, "", "1,'r1','1','u'", "2,NULL,'2','d'",
		"3,'r3','3','u'", "9,'r9','9','u'")
	s.posdel("shop", "compacted", "000015")
	s.upserts("shop", "compacted", "000015", compCols, "", "2,'p15','2','u'", "3,'p15','3','u'",
		"10,'p15','10','u'")
	s.posdel("shop", "compacted", "000016", 3)
	s.upserts("shop", "compacted", "000016", compCols, "", "3,NULL,'3','d'", "4,'p16','4','u'",
		"10,'p16','10','u'")

	// Only the empty chain start.
	s.put("shop/empty_chain.parquet", values("k, v", "1,'one'", "2,'two'", "3,'three'"))
	s.chainStart("shop", "empty_chain", "k, v", kvEmpty)

	// Names that need quoting and glob escaping.
	s.put(`we"ird/sp ace.parquet`, values(weirdCols, "1,'x'"))
	s.chainStart(`we"ird`, "sp ace", weirdCols, weirdEmpty)
	s.put(`we"ird/`+okTable+".parquet", values("id", "1", "2"))
	s.chainStart(`we"ird`, okTable, "id", "SELECT 0::INT AS id WHERE false")
	s.posdel(`we"ird`, okTable, "000001", 0)
	s.upserts(`we"ird`, okTable, "000001", "id", "", "NULL,'1','d'")

	// "t.0" has chain files that the glob of "t" matches (and lists first).
	s.put("coll/t.parquet", values("id, v", "1,'a'", "2,'b'"))
	s.chainStart("coll", "t", "id, v", "SELECT 0::INT AS id, ''::VARCHAR AS v WHERE false")
	s.put("coll/t.0.parquet", values("other, w", "10,1.5"))
	s.chainStart("coll", "t.0", "other, w", "SELECT 0::INT AS other, 0.0::DOUBLE AS w WHERE false")
	s.posdel("coll", "t.0", "000001", 0)
	s.upserts("coll", "t.0", "000001", "other, w", "", "11,2.5::DOUBLE,'11','u'")

	// A reserved column name: always written in full, no chain.
	s.put("shop/fo.parquet", values("id, filename", "1,'a.txt'"))

	if err := os.WriteFile(filepath.Join(s.dir, "manifest.json"), []byte("{}"), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// buildB changes snapshot A (linked forward) as the next refresh would.
func buildB(s snap) {
	s.posdel("shop", "items", "000004", 0)
	s.upserts("shop", "items", "000004", itemsCols, "", "1,'apple',11,'1','u'", "NULL,NULL,NULL,'8','d'")
	// Rewritten in full: new table file, new empty chain start.
	// Same size as A's file (the test also gives it A's mtime): no cache
	// may serve A's bytes for B's file.
	s.put("shop/empty_chain.parquet", values("k, v", "1,'ONE'", "2,'TWO'", "3,'THREE'"))
	s.chainStart("shop", "empty_chain", "k, v", kvEmpty)
	s.posdel("shop", "compacted", "000017", 4)
	s.upserts("shop", "compacted", "000017", compCols, "", "5,'p17','5','u'", "9,NULL,'9','d'")
	s.posdel(`we"ird`, "sp ace", "000001")
	s.upserts(`we"ird`, "sp ace", "000001", weirdCols, "", "2,'y','2','u'")
}

func TestViewsFollowCurrent(t *testing.T) {
	db := openTestDB(t)
	// Glob characters in the backup folder itself.
	src := filepath.Join(t.TempDir(), "back[1]*?", "main")
	a := filepath.Join(src, "snapshots", "A")
	buildA(snap{t, db, a})
	publish(t, src, "A")

	tables, err := TablesFromSnapshot(filepath.Join(src, "current"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range tables {
		names = append(names, r.Schema+"."+r.Table+"("+strings.Join(r.Columns, ",")+")")
	}
	wantNames := []string{"coll.t(id,v)", "coll.t.0(other,w)", "shop.compacted(id,s)", "shop.empty_chain(k,v)",
		"shop.fo(id,filename)", "shop.items(id,name,qty)", "shop.pairs(a,b,v)", "shop.users(email,n)",
		`we"ird.` + okTable + "(id)", `we"ird.sp ace(id,col "q")`}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("tables:\n got %q\nwant %q", names, wantNames)
	}
	var sqlText strings.Builder
	if err := Generate(&sqlText, src, tables); err != nil {
		t.Fatal(err)
	}
	t.Logf("views.sql:\n%s", sqlText.String())

	// The user's session: views loaded once.
	user := openTestDB(t)
	if _, err := user.Exec(sqlText.String()); err != nil {
		t.Fatalf("load views: %v", err)
	}
	items := []string{"1|apple|10", "2|pear|21", "3|plum|32", "4|fig|40", "5|kiwi|55", "6|lime|60", "7|date|77", "8|yuzu|80"}
	comp := []string{"1|r1", "2|p15", "4|p16", "5|o5", "9|r9", "10|p16"}
	wantRows(t, user, `SELECT * FROM shop.items`, items...)
	wantRows(t, user, `SELECT * FROM shop.users`, "a@x|11", "c'q@x|3", "d@x|4")
	wantRows(t, user, `SELECT * FROM shop.pairs`, "7|abc|100", "7|abd|2", "9|x|5")
	wantRows(t, user, `SELECT * FROM shop.compacted`, comp...)
	wantRows(t, user, `SELECT * FROM shop.empty_chain`, "1|one", "2|two", "3|three")
	wantRows(t, user, `SELECT * FROM "we""ird"."sp ace"`, "1|x")
	wantRows(t, user, `SELECT * FROM "we""ird"."o'k*[1]?"`, "2")
	wantRows(t, user, `SELECT * FROM coll.t`, "1|a", "2|b")
	wantRows(t, user, `SELECT * FROM coll."t.0"`, "11|2.5")
	wantRows(t, user, `SELECT * FROM shop.fo`, "1|a.txt")
	// Only the table's own columns.
	for _, r := range tables {
		q := `SELECT column_name FROM (DESCRIBE ` + quoteIdent(r.Schema) + "." + quoteIdent(r.Table) + ")"
		wantRows(t, user, q, r.Columns...)
	}

	// The next snapshot; the same views, not reloaded.
	b := filepath.Join(src, "snapshots", "B")
	linkTree(t, a, b)
	buildB(snap{t, db, b})
	// B's empty_chain file: A's size and modification time, other bytes.
	sa, errA := os.Stat(filepath.Join(a, "shop", "empty_chain.parquet"))
	sb, errB := os.Stat(filepath.Join(b, "shop", "empty_chain.parquet"))
	if errA != nil || errB != nil || sa.Size() != sb.Size() {
		t.Fatalf("empty_chain files: %v %v, want equal sizes", errA, errB)
	}
	if err := os.Chtimes(filepath.Join(b, "shop", "empty_chain.parquet"), sa.ModTime(), sa.ModTime()); err != nil {
		t.Fatal(err)
	}
	publish(t, src, "B")
	items[0], items = "1|apple|11", items[:len(items)-1]
	wantRows(t, user, `SELECT * FROM shop.items`, items...)
	wantRows(t, user, `SELECT * FROM shop.empty_chain`, "1|ONE", "2|TWO", "3|THREE")
	wantRows(t, user, `SELECT * FROM shop.compacted`, "1|r1", "2|p15", "4|p16", "5|p17", "10|p16")
	wantRows(t, user, `SELECT * FROM "we""ird"."sp ace"`, "1|x", "2|y")
	wantRows(t, user, `SELECT * FROM shop.pairs`, "7|abc|100", "7|abd|2", "9|x|5")

	// And back: the older snapshot is still read as it was.
	publish(t, src, "A")
	wantRows(t, user, `SELECT * FROM shop.compacted`, comp...)
	wantRows(t, user, `SELECT * FROM shop.empty_chain`, "1|one", "2|two", "3|three")
}
