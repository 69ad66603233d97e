package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Table caps: traffic deletes the oldest rows beyond them, so that a demo
// left running for days stays small.
const (
	maxOrders    = 5000
	maxCustomers = 2000
)

var firstNames = []string{"Ada", "Alan", "Barbara", "Claude", "Edsger", "Frances", "Grace", "Hedy", "Katherine", "Ken", "Margaret", "Niklaus", "Radia", "Søren", "Tim", "Émilie"}

var lastNames = []string{"Allen", "Berners-Lee", "Dijkstra", "Hamilton", "Johnson", "Kay", "Lamarr", "Liskov", "Perlman", "Ritchie", "Shannon", "Thompson", "Turing", "Wirth", "Kierkegaard", "du Châtelet"}

// traffic sends a small, steady mix of transactions to the shop database:
// new customers and orders, order status changes, stock changes and
// occasional deletes.
type traffic struct {
	db     *sql.DB
	rng    *rand.Rand
	sent   atomic.Int64 // committed transactions
	failed atomic.Int64 // transactions that failed
}

func newTraffic(db *sql.DB) *traffic {
	db.SetMaxOpenConns(2)
	return &traffic{db: db, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x5eed))}
}

// run sends tps transactions per second, one at a time, until ctx is done.
// Failures are counted and reported at most once per 10 seconds.
func (t *traffic) run(ctx context.Context, tps int) {
	tick := time.NewTicker(time.Second / time.Duration(tps))
	defer tick.Stop()
	var lastReport time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		opCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := t.one(opCtx)
		cancel()
		switch {
		case err == nil:
			t.sent.Add(1)
		case ctx.Err() != nil:
			return
		default:
			t.failed.Add(1)
			if time.Since(lastReport) >= 10*time.Second {
				lastReport = time.Now()
				say("traffic: transaction failed (%d so far): %v", t.failed.Load(), err)
			}
		}
	}
}

// one runs one randomly chosen transaction.
func (t *traffic) one(ctx context.Context) error {
	switch n := t.rng.IntN(100); {
	case n < 20:
		return t.newCustomer(ctx)
	case n < 50:
		return t.newOrder(ctx)
	case n < 75:
		return t.advanceOrder(ctx)
	case n < 90:
		return t.changeStock(ctx)
	default:
		return t.deleteOld(ctx)
	}
}

func (t *traffic) newCustomer(ctx context.Context) error {
	first := firstNames[t.rng.IntN(len(firstNames))]
	last := lastNames[t.rng.IntN(len(lastNames))]
	email := fmt.Sprintf("%s.%d@example.com", first, t.rng.IntN(1_000_000))
	_, err := t.db.ExecContext(ctx, "INSERT INTO customers (name, email, created_at) VALUES (?, ?, NOW(6))", first+" "+last, email)
	if err != nil {
		return fmt.Errorf("insert into shop.customers: %w", err)
	}
	return nil
}

// newOrder inserts an order for a random customer and takes the product
// from stock, in one transaction; an empty product is restocked instead.
func (t *traffic) newOrder(ctx context.Context) error {
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("new order: begin: %w", err)
	}
	defer tx.Rollback()
	customer, err := randomID(ctx, tx, "customers", t.rng)
	if err != nil || customer == 0 {
		return err
	}
	var sku string
	var price float64
	var stock int
	err = tx.QueryRowContext(ctx, "SELECT sku, price, stock FROM products ORDER BY sku LIMIT 1 OFFSET ?",
		t.rng.IntN(6)).Scan(&sku, &price, &stock)
	if err != nil {
		return fmt.Errorf("new order: pick a product: %w", err)
	}
	qty := 1 + t.rng.IntN(3)
	if stock < qty {
		if _, err := tx.ExecContext(ctx, "UPDATE products SET stock = stock + 100 WHERE sku = ?", sku); err != nil {
			return fmt.Errorf("restock shop.products %s: %w", sku, err)
		}
	} else {
		note := fmt.Sprintf(`{"sku": %q, "qty": %d}`, sku, qty)
		if t.rng.IntN(4) == 0 {
			note = "" // stored as NULL
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO orders (customer_id, total, status, note) VALUES (?, ?, 'new', NULLIF(?, ''))",
			customer, fmt.Sprintf("%.2f", price*float64(qty)), note); err != nil {
			return fmt.Errorf("insert into shop.orders: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE products SET stock = stock - ? WHERE sku = ?", qty, sku); err != nil {
			return fmt.Errorf("update shop.products %s: %w", sku, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("new order: commit: %w", err)
	}
	return nil
}

// advanceOrder moves a random unshipped order to its next status.
func (t *traffic) advanceOrder(ctx context.Context) error {
	id, err := randomID(ctx, t.db, "orders", t.rng)
	if err != nil || id == 0 {
		return err
	}
	_, err = t.db.ExecContext(ctx, `UPDATE orders SET status = IF(status = 'new', 'paid', 'shipped')
		WHERE id >= ? AND status <> 'shipped' ORDER BY id LIMIT 1`, id)
	if err != nil {
		return fmt.Errorf("update shop.orders status: %w", err)
	}
	return nil
}

// changeStock sells one of a random product, or restocks every product
// that runs low.
func (t *traffic) changeStock(ctx context.Context) error {
	var err error
	if t.rng.IntN(10) == 0 {
		_, err = t.db.ExecContext(ctx, "UPDATE products SET stock = stock + 50 WHERE stock < 20")
	} else {
		_, err = t.db.ExecContext(ctx, "UPDATE products SET stock = stock - 1 WHERE sku = ? AND stock > 0",
			fmt.Sprintf("SKU-%03d", 1+t.rng.IntN(6)))
	}
	if err != nil {
		return fmt.Errorf("update shop.products stock: %w", err)
	}
	return nil
}

// deleteOld deletes the oldest shipped order, or a customer without
// orders, and trims the tables to their caps.
func (t *traffic) deleteOld(ctx context.Context) error {
	stmts := []string{"DELETE FROM orders WHERE status = 'shipped' ORDER BY id LIMIT 1"}
	if t.rng.IntN(2) == 0 {
		stmts = []string{"DELETE FROM customers WHERE id NOT IN (SELECT customer_id FROM orders) ORDER BY id LIMIT 1"}
	}
	var lo, hi sql.NullInt64
	if err := t.db.QueryRowContext(ctx, "SELECT MIN(id), MAX(id) FROM orders").Scan(&lo, &hi); err != nil {
		return fmt.Errorf("range of shop.orders: %w", err)
	}
	if hi.Int64-lo.Int64 >= maxOrders {
		stmts = append(stmts, fmt.Sprintf("DELETE FROM orders WHERE id <= %d ORDER BY id LIMIT 100", hi.Int64-maxOrders))
	}
	if err := t.db.QueryRowContext(ctx, "SELECT MIN(id), MAX(id) FROM customers").Scan(&lo, &hi); err != nil {
		return fmt.Errorf("range of shop.customers: %w", err)
	}
	if hi.Int64-lo.Int64 >= maxCustomers {
		stmts = append(stmts, fmt.Sprintf("DELETE FROM customers WHERE id <= %d ORDER BY id LIMIT 100", hi.Int64-maxCustomers))
	}
	for _, stmt := range stmts {
		if _, err := t.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

// querier is what randomID needs of a *sql.DB or *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// randomID returns a random id in [MIN(id), MAX(id)] of table, or 0 when it
// is empty.
func randomID(ctx context.Context, q querier, table string, rng *rand.Rand) (int64, error) {
	var lo, hi sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT MIN(id), MAX(id) FROM "+table).Scan(&lo, &hi); err != nil {
		return 0, fmt.Errorf("range of shop.%s: %w", table, err)
	}
	if !lo.Valid {
		return 0, nil
	}
	id := lo.Int64 + rng.Int64N(hi.Int64-lo.Int64+1)
	var got int64
	err := q.QueryRowContext(ctx, "SELECT id FROM "+table+" WHERE id >= ? ORDER BY id LIMIT 1", id).Scan(&got)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("pick a row of shop.%s: %w", table, err)
	}
	return got, nil
}
