package capture

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// nudgeFraction is b, a DATETIME2, TIMESTAMP2 or TIME2 value of dec
// fraction digits, with its fraction's last stored digit (the one beyond
// an odd dec) replaced, or now and then (always when dec is 0: no
// fraction is stored) its last byte flipped at random.
func nudgeFraction(r *rand.Rand, b []byte, dec int) []byte {
	out := bytes.Clone(b)
	n := fracBytes(dec)
	if n == 0 || r.IntN(4) == 0 {
		out[len(out)-1] ^= byte(r.UintN(256))
		return out
	}
	v := bigEndian(out[len(out)-n:])
	v = v - v%10 + uint64(r.IntN(10))
	for i := range n {
		out[len(out)-1-i] = byte(v >> (8 * i))
	}
	return out
}

// TestDeltaTemporalFractionMatchesGoMySQL: an update whose DATETIME2,
// TIMESTAMP2 or TIME2 value differs from its before image's only in the
// fraction (digits beyond the FSP, which servers write as zeros, or
// garbage), or at FSP 0 in its last byte, gets the delta go-mysql's path
// gives: "unchanged" exactly when go-mysql's texts are equal, for positive
// and negative TIMEs alike.
func TestDeltaTemporalFractionMatchesGoMySQL(t *testing.T) {
	local := time.Local
	time.Local = time.UTC // see TestDirectRowsMatchGoMySQL
	t.Cleanup(func() { time.Local = local })
	key := intCol("int", false, mysql.MYSQL_TYPE_LONG, 4)
	key.col.Name = "k"
	r := rand.New(rand.NewPCG(5, 6))
	d := &decoder{}
	kept := map[byte]int{} // values of unequal bytes stored as unchanged, by type
	for _, c := range append(directCols(), temporalCols()...) {
		switch c.tp {
		case mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2, mysql.MYSQL_TYPE_TIME2:
		default:
			continue
		}
		c.col.Name, c.col.Nullable = "v", true
		def := &schema.Table{Schema: "s", Name: "t", Key: []string{"k"}, KeyKind: schema.KeyPrimary, Columns: []schema.Column{key.col, c.col}}
		tm := &replication.TableMapEvent{Schema: []byte("s"), Table: []byte("t"), ColumnCount: 2,
			ColumnType: []byte{key.tp, c.tp}, ColumnMeta: []uint16{key.meta, c.meta}}
		for range 500 {
			k, b := key.gen(r), c.gen(r)
			nb := nudgeFraction(r, b, int(c.meta))
			row := func(v []byte) []byte { return append(append([]byte{0}, k...), v...) } // no NULLs, key, value
			imgs, rows, ok := decodeBoth(t, tm, def, [2][]byte{row(b), row(nb)})
			if !ok {
				continue
			}
			checkDelta(t, d, tm, def, &imgs, rows, fmt.Sprintf("%s(%d) delta of %x -> %x", c.col.Type, c.meta, b, nb))
			if !bytes.Equal(b, nb) && sameRaw(c.tp, c.meta, b, nb) {
				kept[c.tp]++
			}
		}
	}
	for _, tp := range []byte{mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2, mysql.MYSQL_TYPE_TIME2} {
		if kept[tp] < 100 {
			t.Errorf("type %d: %d values of unequal bytes taken as equal: the generator misses the case", tp, kept[tp])
		}
	}
}
