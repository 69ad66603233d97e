package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/dbtrail/dbtrail/testsuite"
)

// The bulk-load workload loads wide TPC-C rows the way a benchmark's loader
// (or an application's import) does: multi-row INSERTs of bulkRowsPerStmt
// rows, each statement its own transaction, on bulkConns connections at
// once, alternating between a customer table (21 columns, 420–620 byte
// rows: a 300–500 character VARCHAR and many CHAR columns) and a stock
// table (17 columns, about 320 byte rows: ten CHAR(24)).
const (
	bulkConns       = 4
	bulkRowsPerStmt = 500
	bulkSeed        = 20261202
)

// bulkWorkload is writeBulkWorkload's n row events.
func bulkWorkload(n int) captureWorkload {
	return captureWorkload{
		prefix: "capture (bulk load): ",
		describe: fmt.Sprintf("TPC-C customer (21 columns, 420–620 B rows) and stock (17 columns, ~320 B rows) loaded by multi-row INSERTs "+
			"of %d rows, one transaction each, %d connections at once", bulkRowsPerStmt, bulkConns),
		ratioTarget: 0.85,
		write: func(ctx context.Context, src *testsuite.Server) (binlogRange, error) {
			return writeBulkWorkload(ctx, src, n)
		},
	}
}

// writeBulkWorkload creates the bulk database's customer and stock tables
// on src and loads n rows into them (n rounded up to whole statements),
// and returns the binlog range holding the load.
func writeBulkWorkload(ctx context.Context, src *testsuite.Server, n int) (rng binlogRange, err error) {
	if err = src.Exec(ctx, "CREATE DATABASE bulk"); err != nil {
		return
	}
	db, err := src.DB(ctx, "bulk")
	if err != nil {
		return
	}
	defer db.Close()
	for _, stmt := range oltpSchema() {
		if strings.Contains(stmt, "TABLE customer") || strings.Contains(stmt, "TABLE stock") {
			if _, err = db.ExecContext(ctx, stmt); err != nil {
				return rng, fmt.Errorf("create bulk table: %w", err)
			}
		}
	}
	stmts := (n + bulkRowsPerStmt - 1) / bulkRowsPerStmt
	if rng.start, err = masterPos(ctx, src); err != nil {
		return
	}
	began := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for k := range bulkConns {
		g.Go(func() error { return loadBulk(gctx, db, k, stmts) })
	}
	if err = g.Wait(); err != nil {
		return
	}
	rng.events, rng.written = stmts*bulkRowsPerStmt, time.Since(began)
	rng.end, err = masterPos(ctx, src)
	return
}

// loadBulk runs connection k's share of the stmts statements: statement s
// (s ≡ k mod bulkConns) loads rows s*bulkRowsPerStmt+1 … of customer when s
// is even, of stock when odd.
func loadBulk(ctx context.Context, db *sql.DB, k, stmts int) error {
	rng := rand.New(rand.NewPCG(bulkSeed, uint64(k)))
	var b strings.Builder
	for s := k; s < stmts; s += bulkConns {
		b.Reset()
		first := (s/2)*bulkRowsPerStmt + 1
		if s%2 == 0 {
			bulkCustomers(&b, rng, first)
		} else {
			bulkStock(&b, rng, first)
		}
		res, err := db.ExecContext(ctx, b.String())
		if err != nil {
			return fmt.Errorf("bulk load statement %d: %w", s, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != bulkRowsPerStmt {
			return fmt.Errorf("bulk load statement %d inserted %d rows, not %d (%v)", s, n, bulkRowsPerStmt, err)
		}
	}
	return nil
}

// bulkCustomers writes the INSERT of customers first … first+bulkRowsPerStmt-1
// (customer r is c_id r%3000+1 of district r/3000%10+1 of warehouse
// r/30000+1).
func bulkCustomers(b *strings.Builder, rng *rand.Rand, first int) {
	b.WriteString(`INSERT INTO customer (c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state,
		c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data) VALUES `)
	for r := first; r < first+bulkRowsPerStmt; r++ {
		if r > first {
			b.WriteByte(',')
		}
		credit := "GC"
		if rng.IntN(10) == 0 {
			credit = "BC"
		}
		fmt.Fprintf(b, "(%d,%d,%d,'%s','OE','%s','%s','%s','%s','%s','%s','%s','%s','%s',50000.00,0.%04d,-10.00,10.00,1,0,'%s')",
			r%3000+1, r/3000%10+1, r/30000+1, letters(rng, 8+rng.IntN(9)), letters(rng, 6+rng.IntN(11)),
			letters(rng, 10+rng.IntN(11)), letters(rng, 10+rng.IntN(11)), letters(rng, 10+rng.IntN(11)), letters(rng, 2),
			digits(rng, 9), digits(rng, 16), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r)*time.Second).Format(time.DateTime),
			credit, rng.IntN(5000), letters(rng, 300+rng.IntN(201)))
	}
}

// bulkStock writes the INSERT of stock rows first … first+bulkRowsPerStmt-1
// (row r is item r%100000+1 of warehouse r/100000+1).
func bulkStock(b *strings.Builder, rng *rand.Rand, first int) {
	b.WriteString(`INSERT INTO stock (s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06,
		s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data) VALUES `)
	for r := first; r < first+bulkRowsPerStmt; r++ {
		if r > first {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "(%d,%d,%d", r%100000+1, r/100000+1, 10+rng.IntN(91))
		for range 10 {
			fmt.Fprintf(b, ",'%s'", letters(rng, 24))
		}
		fmt.Fprintf(b, ",0,0,0,'%s')", letters(rng, 26+rng.IntN(25)))
	}
}

// letters is n random letters, safe in a quoted SQL literal.
func letters(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

// digits is n random digits.
func digits(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + rng.IntN(10))
	}
	return string(b)
}
