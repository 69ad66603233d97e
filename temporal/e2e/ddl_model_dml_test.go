package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"
)

// modelDML is TestSchemaChangeModel's row traffic: connections that
// insert, update, move keys and delete rows of the model's tables, each
// statement under the model's read lock (a schema change takes the write
// lock, so every statement sees the tables as the model has them).
type modelDML struct {
	stop    atomic.Bool
	wg      sync.WaitGroup
	err     atomic.Value
	changes atomic.Int64
}

// startModelDML starts conns connections of row changes on m's tables.
func startModelDML(ctx context.Context, db *sql.DB, m *ddlModel, mu *sync.RWMutex, seed uint64, conns int) *modelDML {
	d := &modelDML{}
	for g := range conns {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(100+g)))
			for !d.stop.Load() {
				mu.RLock()
				err := d.change(ctx, db, r, m)
				mu.RUnlock()
				if err != nil {
					d.err.CompareAndSwap(nil, fmt.Errorf("connection %d: %w", g, err))
					return
				}
				d.changes.Add(1)
				time.Sleep(time.Duration(2+r.IntN(6)) * time.Millisecond)
			}
		}()
	}
	return d
}

// check fails t when a connection failed.
func (d *modelDML) check(t *testing.T) {
	t.Helper()
	if err, _ := d.err.Load().(error); err != nil {
		t.Fatalf("row traffic: %v", err)
	}
}

// close stops the connections and waits for them.
func (d *modelDML) close(t *testing.T) {
	t.Helper()
	d.stop.Store(true)
	d.wg.Wait()
	d.check(t)
}

// change makes one random row change (or one transaction over two tables),
// again when the server broke a deadlock.
func (d *modelDML) change(ctx context.Context, db *sql.DB, r *rand.Rand, m *ddlModel) error {
	a, b := m.tables[r.IntN(len(m.tables))], m.tables[r.IntN(len(m.tables))]
	var stmts [][]any
	switch op := r.IntN(20); {
	case op < 8 || a.next.Load() == 0:
		stmts = append(stmts, insertStmt(r, a))
	case op < 13:
		stmts = append(stmts, updateStmt(r, a))
	case op < 15:
		stmts = append(stmts, []any{fmt.Sprintf("UPDATE `%s` SET id = ? WHERE id = ?", a.name), a.next.Add(1), randID(r, a)})
	case op < 18:
		stmts = append(stmts, []any{fmt.Sprintf("DELETE FROM `%s` WHERE id = ?", a.name), randID(r, a)})
	default: // one transaction: a row into a, a change of b
		stmts = append(stmts, insertStmt(r, a), updateStmt(r, b))
	}
	for attempt := 0; ; attempt++ {
		err := execTx(ctx, db, stmts)
		var me *driver.MySQLError
		if err != nil && errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205) && attempt < 20 {
			continue
		}
		return err
	}
}

// execTx runs stmts (each the text, then its arguments) in one transaction.
func execTx(ctx context.Context, db *sql.DB, stmts [][]any) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s[0].(string), s[1:]...); err != nil {
			tx.Rollback()
			return fmt.Errorf("%s %v: %w", s[0], s[1:], err)
		}
	}
	return tx.Commit()
}

func randID(r *rand.Rand, t *mtable) int64 { return 1 + r.Int64N(max(t.next.Load(), 1)) }

// insertStmt inserts a new id into t with n and, now and then, another
// column set; the rest take their defaults.
func insertStmt(r *rand.Rand, t *mtable) []any {
	cols, args := []string{"id"}, []any{t.next.Add(1)}
	for _, c := range t.writable() {
		if c.name == "n" || r.IntN(2) == 0 {
			cols = append(cols, "`"+c.name+"`")
			args = append(args, c.value(r))
		}
	}
	q := fmt.Sprintf("INSERT INTO `%s` (%s) VALUES (?%s)", t.name, strings.Join(cols, ", "), strings.Repeat(", ?", len(cols)-1))
	return append([]any{q}, args...)
}

// updateStmt sets one column of a random row of t.
func updateStmt(r *rand.Rand, t *mtable) []any {
	w := t.writable()
	c := w[r.IntN(len(w))]
	return []any{fmt.Sprintf("UPDATE `%s` SET `%s` = ? WHERE id = ?", t.name, c.name), c.value(r), randID(r, t)}
}
