package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"golang.org/x/sync/errgroup"

	"github.com/dbtrail/dbtrail/testsuite"
)

// The interleaved workload's schema is TPC-C's nine tables in database
// tpcc, populated small. Writer connection k (0-based) owns the warehouses
// w ≡ k+1 and the items i ≡ k+1 (mod oltpConns): its transactions change
// only rows of those, so writers never wait for each other's locks and
// each writer knows which rows exist.
const (
	oltpConns      = 4     // concurrent writer connections
	oltpWarehouses = 4     // a multiple of oltpConns
	oltpDistricts  = 10    // per warehouse
	oltpCustomers  = 300   // per district
	oltpItems      = 10000 // a multiple of oltpConns; stock has one row per item and warehouse
	oltpOrders     = 30    // initial orders per district, o_id 1..oltpOrders, of customer o_id
	oltpNewOrders  = 9     // of which the last oltpNewOrders are undelivered (in new_orders)
	oltpMaxLines   = 15    // the most lines an order may have
	oltpSeed       = 20261129
)

// oltpWorkload is writeOLTPWorkload's n row events.
func oltpWorkload(n int) captureWorkload {
	return captureWorkload{
		prefix: "capture (interleaved): ",
		describe: fmt.Sprintf("9 TPC-C tables (3 to 21 columns, wide customer and stock rows); %d connections of transactions of 10–30 "+
			"single-row statements switching table (new-order, payment, delivery, order purge, price change), one round trip each; "+
			"a population of 86k rows before the range", oltpConns),
		ratioTarget: 0.85,
		bytesTarget: 400,
		write: func(ctx context.Context, src *testsuite.Server) (binlogRange, error) {
			return writeOLTPWorkload(ctx, src, n)
		},
	}
}

// writeOLTPWorkload creates and populates the tpcc database on src (bulk
// INSERT … SELECT from sequence tables), then writes n row events of
// short transactions on oltpConns connections and returns the binlog range
// holding those n events (not the population).
func writeOLTPWorkload(ctx context.Context, src *testsuite.Server, n int) (rng binlogRange, err error) {
	if err = src.Exec(ctx, "CREATE DATABASE tpcc"); err != nil {
		return
	}
	db, err := src.DB(ctx, "tpcc")
	if err != nil {
		return
	}
	defer db.Close()
	for _, stmt := range append(oltpSchema(), oltpPopulation()...) {
		if _, err = db.ExecContext(ctx, stmt); err != nil {
			return rng, fmt.Errorf("populate tpcc: %q: %w", abbreviate(stmt, 120), err)
		}
	}
	if rng.start, err = masterPos(ctx, src); err != nil {
		return
	}
	began := time.Now()
	if err = runOLTPWriters(ctx, db, n); err != nil {
		return
	}
	rng.events, rng.written = n, time.Since(began)
	rng.end, err = masterPos(ctx, src)
	return
}

// runOLTPWriters runs oltpConns writers on connections of db, concurrently,
// until they have written n single-row statements in all.
func runOLTPWriters(ctx context.Context, db *sql.DB, n int) error {
	g, gctx := errgroup.WithContext(ctx)
	for k := range oltpConns {
		budget := n / oltpConns
		if k < n%oltpConns {
			budget++
		}
		w := newOLTPWriter(k)
		g.Go(func() error {
			conn, err := writerConn(gctx, db, k)
			if err != nil {
				return err
			}
			defer conn.Close()
			return w.run(gctx, conn, budget)
		})
	}
	return g.Wait()
}

// writerConn is writer k's connection: READ COMMITTED, as an OLTP
// application's.
func writerConn(ctx context.Context, db *sql.DB, k int) (*sql.Conn, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("writer %d: connect: %w", k, err)
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"); err != nil {
		conn.Close()
		return nil, fmt.Errorf("writer %d: %w", k, err)
	}
	return conn, nil
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// oltpSchema is the CREATE TABLE statements of the tpcc database.
func oltpSchema() []string {
	dists := make([]string, 10)
	for i := range dists {
		dists[i] = fmt.Sprintf("s_dist_%02d CHAR(24) NOT NULL", i+1)
	}
	const opts = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
	return []string{
		`CREATE TABLE warehouse (
			w_id INT NOT NULL, w_name VARCHAR(10) NOT NULL, w_street_1 VARCHAR(20) NOT NULL, w_street_2 VARCHAR(20) NOT NULL,
			w_city VARCHAR(20) NOT NULL, w_state CHAR(2) NOT NULL, w_zip CHAR(9) NOT NULL, w_tax DECIMAL(4,4) NOT NULL,
			w_ytd DECIMAL(12,2) NOT NULL, PRIMARY KEY (w_id))` + opts,
		`CREATE TABLE district (
			d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10) NOT NULL, d_street_1 VARCHAR(20) NOT NULL,
			d_street_2 VARCHAR(20) NOT NULL, d_city VARCHAR(20) NOT NULL, d_state CHAR(2) NOT NULL, d_zip CHAR(9) NOT NULL,
			d_tax DECIMAL(4,4) NOT NULL, d_ytd DECIMAL(12,2) NOT NULL, d_next_o_id INT NOT NULL,
			PRIMARY KEY (d_w_id, d_id))` + opts,
		`CREATE TABLE customer (
			c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, c_first VARCHAR(16) NOT NULL, c_middle CHAR(2) NOT NULL,
			c_last VARCHAR(16) NOT NULL, c_street_1 VARCHAR(20) NOT NULL, c_street_2 VARCHAR(20) NOT NULL, c_city VARCHAR(20) NOT NULL,
			c_state CHAR(2) NOT NULL, c_zip CHAR(9) NOT NULL, c_phone CHAR(16) NOT NULL, c_since DATETIME NOT NULL,
			c_credit CHAR(2) NOT NULL, c_credit_lim DECIMAL(12,2) NOT NULL, c_discount DECIMAL(4,4) NOT NULL,
			c_balance DECIMAL(12,2) NOT NULL, c_ytd_payment DECIMAL(12,2) NOT NULL, c_payment_cnt INT NOT NULL,
			c_delivery_cnt INT NOT NULL, c_data VARCHAR(500) NOT NULL,
			PRIMARY KEY (c_w_id, c_d_id, c_id), KEY idx_customer (c_w_id, c_d_id, c_last, c_first))` + opts,
		`CREATE TABLE history (
			h_id BIGINT NOT NULL AUTO_INCREMENT, h_c_id INT NOT NULL, h_c_d_id INT NOT NULL, h_c_w_id INT NOT NULL,
			h_d_id INT NOT NULL, h_w_id INT NOT NULL, h_date DATETIME NOT NULL, h_amount DECIMAL(6,2) NOT NULL,
			h_data VARCHAR(24) NOT NULL, PRIMARY KEY (h_id))` + opts,
		`CREATE TABLE new_orders (
			no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL,
			PRIMARY KEY (no_w_id, no_d_id, no_o_id))` + opts,
		`CREATE TABLE orders (
			o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT NOT NULL, o_entry_d DATETIME NOT NULL,
			o_carrier_id INT NULL, o_ol_cnt INT NOT NULL, o_all_local TINYINT NOT NULL,
			PRIMARY KEY (o_w_id, o_d_id, o_id), KEY idx_orders (o_w_id, o_d_id, o_c_id, o_id))` + opts,
		`CREATE TABLE order_line (
			ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL, ol_i_id INT NOT NULL,
			ol_supply_w_id INT NOT NULL, ol_delivery_d DATETIME NULL, ol_quantity INT NOT NULL, ol_amount DECIMAL(6,2) NOT NULL,
			ol_dist_info CHAR(24) NOT NULL, PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))` + opts,
		`CREATE TABLE item (
			i_id INT NOT NULL, i_im_id INT NOT NULL, i_name VARCHAR(24) NOT NULL, i_price DECIMAL(5,2) NOT NULL,
			i_data VARCHAR(50) NOT NULL, PRIMARY KEY (i_id))` + opts,
		`CREATE TABLE stock (
			s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT NOT NULL, ` + strings.Join(dists, ", ") + `,
			s_ytd DECIMAL(8,0) NOT NULL, s_order_cnt INT NOT NULL, s_remote_cnt INT NOT NULL, s_data VARCHAR(50) NOT NULL,
			PRIMARY KEY (s_w_id, s_i_id))` + opts,
	}
}

// oltpInitialLines is the number of lines of initial order o: the
// population's o_ol_cnt, 5 + MOD(o, 9).
func oltpInitialLines(o int) int { return 5 + o%9 }

// oltpPopulation is the INSERT … SELECT statements filling the tpcc tables
// with their initial rows: oltpWarehouses warehouses of oltpDistricts
// districts of oltpCustomers customers (one history row each),
// oltpItems items and their stock in each warehouse, and oltpOrders orders
// per district, the last oltpNewOrders of them undelivered.
func oltpPopulation() []string {
	const (
		w, d, c, i, o, no, ml = oltpWarehouses, oltpDistricts, oltpCustomers, oltpItems, oltpOrders, oltpNewOrders, oltpMaxLines
		syl                   = "'BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI', 'CALLY', 'ATION', 'EING'"
	)
	dists := make([]string, 10)
	for k := range dists {
		dists[k] = fmt.Sprintf("LEFT(SHA1(CONCAT(seq, '-%02d')), 24)", k+1)
	}
	return []string{
		fmt.Sprintf(`INSERT INTO warehouse (w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd)
			SELECT seq, CONCAT('wh-', seq), CONCAT(seq, ' Warehouse Road'), CONCAT('Unit ', seq), 'Springfield', 'CA',
			CONCAT(LPAD(seq, 4, '0'), '11111'), MOD(seq, 20) / 100, 300000.00 FROM seq_1_to_%d`, w),
		fmt.Sprintf(`INSERT INTO district (d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id)
			SELECT MOD(seq, %[1]d) + 1, seq DIV %[1]d + 1, CONCAT('dist-', seq), CONCAT(seq, ' District Avenue'), 'Floor 2',
			'Shelbyville', 'OR', CONCAT(LPAD(seq, 4, '0'), '22222'), MOD(seq, 17) / 100, 30000.00, %[2]d FROM seq_0_to_%[3]d`, d, o+1, w*d-1),
		fmt.Sprintf(`INSERT INTO customer (c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state,
			c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data)
			SELECT c, MOD(seq DIV %[1]d, %[2]d) + 1, seq DIV %[3]d + 1, CONCAT('first-', LEFT(SHA1(seq), 8)), 'OE',
			CONCAT(ELT(MOD(c DIV 100, 10) + 1, %[4]s), ELT(MOD(c DIV 10, 10) + 1, %[4]s), ELT(MOD(c, 10) + 1, %[4]s)),
			CONCAT(seq, ' Main Street'), 'Apartment 7', 'Capital City', 'WA', CONCAT(LPAD(MOD(seq, 10000), 4, '0'), '33333'),
			LPAD(seq, 16, '0'), '2026-11-01 00:00:00' + INTERVAL seq MINUTE, IF(MOD(c, 10) = 0, 'BC', 'GC'), 50000.00,
			MOD(seq, 5000) / 10000, -10.00, 10.00, 1, 0, LEFT(REPEAT(CONCAT(SHA1(seq), ' '), 13), 300 + MOD(seq, 201))
			FROM (SELECT seq, MOD(seq, %[1]d) + 1 AS c FROM seq_0_to_%[5]d) s`, c, d, c*d, syl, w*d*c-1),
		fmt.Sprintf(`INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
			SELECT MOD(seq, %[1]d) + 1, MOD(seq DIV %[1]d, %[2]d) + 1, seq DIV %[3]d + 1, MOD(seq DIV %[1]d, %[2]d) + 1, seq DIV %[3]d + 1,
			'2026-11-01 00:00:00' + INTERVAL seq MINUTE, 10.00, CONCAT('initial payment ', seq) FROM seq_0_to_%[4]d`, c, d, c*d, w*d*c-1),
		fmt.Sprintf(`INSERT INTO item (i_id, i_im_id, i_name, i_price, i_data)
			SELECT seq, MOD(seq * 7, 10000) + 1, CONCAT('item-', LEFT(SHA1(seq), 14)), 1 + MOD(seq * 37, 9900) / 100,
			LEFT(REPEAT(SHA1(seq), 2), 26 + MOD(seq, 25)) FROM seq_1_to_%d`, i),
		fmt.Sprintf(`INSERT INTO stock (s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06,
			s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data)
			SELECT MOD(seq, %[1]d) + 1, seq DIV %[1]d + 1, 10 + MOD(seq, 91), %[2]s, 0, 0, 0,
			LEFT(REPEAT(SHA1(seq + 7), 2), 26 + MOD(seq, 25)) FROM seq_0_to_%[3]d`, i, strings.Join(dists, ", "), w*i-1),
		fmt.Sprintf(`INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
			SELECT o, MOD(seq DIV %[1]d, %[2]d) + 1, seq DIV %[3]d + 1, o, '2026-11-01 00:00:00' + INTERVAL seq MINUTE,
			IF(o <= %[4]d, MOD(seq, 10) + 1, NULL), 5 + MOD(o, 9), 1
			FROM (SELECT seq, MOD(seq, %[1]d) + 1 AS o FROM seq_0_to_%[5]d) s`, o, d, o*d, o-no, w*d*o-1),
		fmt.Sprintf(`INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
			ol_quantity, ol_amount, ol_dist_info)
			SELECT o, d, w, l, MOD(seq * 7919, %[1]d) + 1, w, IF(o <= %[2]d, '2026-11-02 00:00:00', NULL), 5,
			IF(o <= %[2]d, 0.00, MOD(seq, 9999) / 100 + 0.01), LEFT(SHA1(seq), 24)
			FROM (SELECT seq, MOD(seq, %[3]d) + 1 AS l, MOD(seq DIV %[3]d, %[4]d) + 1 AS o, MOD(seq DIV %[5]d, %[6]d) + 1 AS d,
				seq DIV %[7]d + 1 AS w FROM seq_0_to_%[8]d) s
			WHERE l <= 5 + MOD(o, 9)`, i, o-no, ml, o, ml*o, d, ml*o*d, w*d*o*ml-1),
		fmt.Sprintf(`INSERT INTO new_orders (no_o_id, no_d_id, no_w_id)
			SELECT %[1]d + MOD(seq, %[2]d), MOD(seq DIV %[2]d, %[3]d) + 1, seq DIV %[4]d + 1 FROM seq_0_to_%[5]d`,
			o-no+1, no, d, no*d, w*d*no-1),
	}
}

// oltpOrder is an order a writer knows: its key, its customer and its
// number of lines.
type oltpOrder struct{ w, d, o, c, lines int }

// oltpWriter generates and runs the transactions of writer connection k.
// It tracks the rows its statements touch, all in its own warehouses and
// items, so that every statement changes exactly one row. Its transactions
// depend only on k (a seeded PRNG), not on timing.
type oltpWriter struct {
	k           int
	rng         *rand.Rand
	warehouses  []int
	nextOrder   map[[2]int]int // next o_id of (warehouse, district)
	undelivered []oltpOrder    // orders in new_orders, oldest first
	delivered   []oltpOrder    // delivered orders not purged yet, oldest first
	txns        int            // transactions generated so far, the clock
}

// newOLTPWriter returns writer k's generator at the state of the initial
// population.
func newOLTPWriter(k int) *oltpWriter {
	g := &oltpWriter{k: k, rng: rand.New(rand.NewPCG(oltpSeed, uint64(k))), nextOrder: map[[2]int]int{}}
	for w := k + 1; w <= oltpWarehouses; w += oltpConns {
		g.warehouses = append(g.warehouses, w)
		for d := 1; d <= oltpDistricts; d++ {
			g.nextOrder[[2]int{w, d}] = oltpOrders + 1
		}
	}
	for o := oltpOrders - oltpNewOrders + 1; o <= oltpOrders; o++ {
		for _, w := range g.warehouses {
			for d := 1; d <= oltpDistricts; d++ {
				g.undelivered = append(g.undelivered, oltpOrder{w, d, o, o, oltpInitialLines(o)})
			}
		}
	}
	return g
}

// run executes writer g's transactions on conn, each in one round trip,
// until they hold budget statements (the last transaction is cut short to
// fit), and fails unless every statement changed exactly one row.
func (g *oltpWriter) run(ctx context.Context, conn *sql.Conn, budget int) error {
	for budget > 0 {
		stmts := g.next()
		if len(stmts) > budget {
			// The state now holds rows the cut statements would have
			// written, but this is the writer's last transaction.
			stmts = stmts[:budget]
		}
		if err := execTransaction(ctx, conn, stmts); err != nil {
			return fmt.Errorf("writer %d, transaction %d: %w", g.k, g.txns, err)
		}
		budget -= len(stmts)
	}
	return nil
}

// execTransaction runs stmts in one transaction and one round trip on
// conn (a multi-statement text), and fails unless each changed exactly one
// row.
func execTransaction(ctx context.Context, conn *sql.Conn, stmts []string) error {
	q := "START TRANSACTION;\n" + strings.Join(stmts, ";\n") + ";\nCOMMIT"
	return conn.Raw(func(dc any) error {
		ex, ok := dc.(driver.ExecerContext)
		if !ok {
			return errors.New("the driver connection cannot run a statement")
		}
		res, err := ex.ExecContext(ctx, q, nil)
		if err != nil {
			return err
		}
		mr, ok := res.(gomysql.Result)
		if !ok {
			return errors.New("the driver does not report rows affected per statement")
		}
		affected := mr.AllRowsAffected()
		if len(affected) != len(stmts)+2 {
			return fmt.Errorf("%d results of %d statements", len(affected), len(stmts)+2)
		}
		for i, n := range affected[1 : len(stmts)+1] {
			if n != 1 {
				return fmt.Errorf("statement changed %d rows, not 1: %s", n, stmts[i])
			}
		}
		return nil
	})
}

// next generates the statements of g's next transaction, 10 to 30 of them:
// new-order 45%, payments 43%, delivery 6%, order purge 3%, price change
// 3%; payments when a delivery or a purge has no orders to work on.
func (g *oltpWriter) next() []string {
	g.txns++
	switch r := g.rng.IntN(100); {
	case r < 45:
		return g.newOrder()
	case r < 88:
		return g.payments()
	case r < 94:
		if len(g.undelivered) >= 2 {
			return g.delivery()
		}
	case r < 97:
		if len(g.delivered) > 0 {
			return g.purge()
		}
	default:
		return g.priceChange()
	}
	return g.payments()
}

// newOrder is one TPC-C new-order of 5 to 13 lines, 13 to 29 statements:
// the district's next order id, the order, its new_orders row, then for
// each line its stock update and its order_line row.
func (g *oltpWriter) newOrder() []string {
	w, d, c := g.warehouse(), g.district(), g.customer()
	key := [2]int{w, d}
	o := g.nextOrder[key]
	g.nextOrder[key]++
	lines := 5 + g.rng.IntN(9)
	now := g.now()
	s := []string{
		fmt.Sprintf("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = %d AND d_id = %d", w, d),
		fmt.Sprintf("INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) "+
			"VALUES (%d, %d, %d, %d, '%s', NULL, %d, 1)", o, d, w, c, now, lines),
		fmt.Sprintf("INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (%d, %d, %d)", o, d, w),
	}
	for l := 1; l <= lines; l++ {
		i, q := 1+g.rng.IntN(oltpItems), 1+g.rng.IntN(10)
		s = append(s,
			fmt.Sprintf("UPDATE stock SET s_quantity = IF(s_quantity >= %d, s_quantity - %d, s_quantity - %d + 91), "+
				"s_ytd = s_ytd + %d, s_order_cnt = s_order_cnt + 1 WHERE s_w_id = %d AND s_i_id = %d", q+10, q, q, q, w, i),
			fmt.Sprintf("INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, "+
				"ol_quantity, ol_amount, ol_dist_info) VALUES (%d, %d, %d, %d, %d, %d, NULL, %d, %s, '%s')",
				o, d, w, l, i, w, q, money(q*(100+g.rng.IntN(9900))), g.text(24)))
	}
	g.undelivered = append(g.undelivered, oltpOrder{w, d, o, c, lines})
	return s
}

// payments is 3 to 7 TPC-C payments, 4 statements each: the warehouse's
// and the district's year-to-date, the customer (whose c_data grows when
// of bad credit) and a history row.
func (g *oltpWriter) payments() []string {
	var s []string
	for range 3 + g.rng.IntN(5) {
		w, d, c := g.warehouse(), g.district(), g.customer()
		amount := money(100 + g.rng.IntN(500000))
		cust := fmt.Sprintf("UPDATE customer SET c_balance = c_balance - %[1]s, c_ytd_payment = c_ytd_payment + %[1]s, "+
			"c_payment_cnt = c_payment_cnt + 1", amount)
		if c%10 == 0 { // bad credit, as the population's c_credit
			cust += fmt.Sprintf(", c_data = LEFT(CONCAT('%d %d %d %d %d %s | ', c_data), 500)", c, d, w, d, w, amount)
		}
		s = append(s,
			fmt.Sprintf("UPDATE warehouse SET w_ytd = w_ytd + %s WHERE w_id = %d", amount, w),
			fmt.Sprintf("UPDATE district SET d_ytd = d_ytd + %s WHERE d_w_id = %d AND d_id = %d", amount, w, d),
			cust+fmt.Sprintf(" WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c),
			fmt.Sprintf("INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) "+
				"VALUES (%d, %d, %d, %d, %d, '%s', %s, 'wh-%d    dist-%d')", c, d, w, d, w, g.now(), amount, w, d))
	}
	return s
}

// delivery delivers the oldest undelivered orders, as many as fit in 30
// statements (at least 16 statements given two orders): for each, its
// new_orders row deleted, its carrier set, each line's delivery date set,
// and its customer's balance. It needs two undelivered orders.
func (g *oltpWriter) delivery() []string {
	var s []string
	carrier, now := 1+g.rng.IntN(10), g.now()
	for len(g.undelivered) > 0 {
		o := g.undelivered[0]
		if len(s)+3+o.lines > 30 {
			break
		}
		g.undelivered = g.undelivered[1:]
		s = append(s,
			fmt.Sprintf("DELETE FROM new_orders WHERE no_w_id = %d AND no_d_id = %d AND no_o_id = %d", o.w, o.d, o.o),
			fmt.Sprintf("UPDATE orders SET o_carrier_id = %d WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d", carrier, o.w, o.d, o.o))
		for l := 1; l <= o.lines; l++ {
			s = append(s, fmt.Sprintf("UPDATE order_line SET ol_delivery_d = '%s' WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d AND ol_number = %d",
				now, o.w, o.d, o.o, l))
		}
		s = append(s, fmt.Sprintf("UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1 "+
			"WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", money(100+g.rng.IntN(100000)), o.w, o.d, o.c))
		g.delivered = append(g.delivered, o)
	}
	return s
}

// purge deletes the oldest delivered order, 11 to 27 statements: each of
// its lines deleted, each followed by a restock of an item of the
// warehouse, then the order. It needs a delivered order.
func (g *oltpWriter) purge() []string {
	o := g.delivered[0]
	g.delivered = g.delivered[1:]
	var s []string
	for l := 1; l <= o.lines; l++ {
		s = append(s,
			fmt.Sprintf("DELETE FROM order_line WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d AND ol_number = %d", o.w, o.d, o.o, l),
			fmt.Sprintf("UPDATE stock SET s_quantity = s_quantity + %d WHERE s_w_id = %d AND s_i_id = %d", 1+g.rng.IntN(50), o.w, 1+g.rng.IntN(oltpItems)))
	}
	return append(s, fmt.Sprintf("DELETE FROM orders WHERE o_w_id = %d AND o_d_id = %d AND o_id = %d", o.w, o.d, o.o))
}

// priceChange changes 5 to 15 of g's items, 10 to 30 statements: the
// item's price and data, then its stock's data in one of g's warehouses.
func (g *oltpWriter) priceChange() []string {
	var s []string
	for range 5 + g.rng.IntN(11) {
		i := g.rng.IntN(oltpItems/oltpConns)*oltpConns + g.k + 1
		s = append(s,
			fmt.Sprintf("UPDATE item SET i_price = %s, i_im_id = i_im_id + 1, i_data = '%s' WHERE i_id = %d",
				money(100+g.rng.IntN(9900)), g.text(26+g.rng.IntN(25)), i),
			fmt.Sprintf("UPDATE stock SET s_data = '%s', s_remote_cnt = s_remote_cnt + 1 WHERE s_w_id = %d AND s_i_id = %d",
				g.text(26+g.rng.IntN(25)), g.warehouse(), i))
	}
	return s
}

func (g *oltpWriter) warehouse() int { return g.warehouses[g.rng.IntN(len(g.warehouses))] }
func (g *oltpWriter) district() int  { return 1 + g.rng.IntN(oltpDistricts) }
func (g *oltpWriter) customer() int  { return 1 + g.rng.IntN(oltpCustomers) }

// now is the DATETIME text of g's clock: a second per transaction from
// 2026-12-01.
func (g *oltpWriter) now() string {
	return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(g.txns) * time.Second).Format(time.DateTime)
}

// text is n random lowercase letters, safe in a quoted SQL literal.
func (g *oltpWriter) text(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + g.rng.IntN(26))
	}
	return string(b)
}

// money is the DECIMAL literal of cents.
func money(cents int) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }
