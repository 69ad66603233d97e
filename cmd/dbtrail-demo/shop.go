package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dbtrail/dbtrail/testsuite"
)

// shopDDL creates the sample schema on the source when it is missing.
var shopDDL = []string{
	"CREATE DATABASE IF NOT EXISTS shop CHARACTER SET utf8mb4",
	`CREATE TABLE IF NOT EXISTS shop.customers (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  email VARCHAR(255) NOT NULL,
  created_at DATETIME(6) NOT NULL
) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS shop.products (
  sku VARCHAR(32) NOT NULL PRIMARY KEY,
  title VARCHAR(200) NOT NULL,
  price DECIMAL(10,2) NOT NULL,
  stock INT UNSIGNED NOT NULL
) ENGINE=InnoDB`,
	`CREATE TABLE IF NOT EXISTS shop.orders (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer_id INT UNSIGNED NOT NULL,
  total DECIMAL(12,2) NOT NULL,
  status ENUM('new','paid','shipped') NOT NULL DEFAULT 'new',
  note JSON NULL,
  KEY by_customer (customer_id),
  KEY by_status (status, id)
) ENGINE=InnoDB`,
}

// shopSeed fills the sample tables; it runs once, when products is empty.
var shopSeed = []string{
	`INSERT INTO shop.products (sku, title, price, stock) VALUES
  ('SKU-001', 'Espresso beans 1 kg', 24.90, 120),
  ('SKU-002', 'Ceramic mug', 9.50, 300),
  ('SKU-003', 'Pour-over kettle', 59.00, 40),
  ('SKU-004', 'Hand grinder', 89.99, 25),
  ('SKU-005', 'Paper filters (100)', 4.20, 800),
  ('SKU-006', 'Café crème sampler', 17.35, 150)`,
	`INSERT INTO shop.customers (name, email, created_at) VALUES
  ('Ada Lovelace', 'ada@example.com', NOW(6)),
  ('Grace Hopper', 'grace@example.com', NOW(6)),
  ('José Martínez', 'jose@example.com', NOW(6)),
  ('Zoë Ødegaard', 'zoe@example.com', NOW(6)),
  ('Linus Pauling', 'linus@example.com', NOW(6))`,
	`INSERT INTO shop.orders (customer_id, total, status, note) VALUES
  (1, 49.80, 'shipped', '{"sku": "SKU-001", "qty": 2}'),
  (2, 9.50, 'paid', '{"sku": "SKU-002", "qty": 1}'),
  (3, 89.99, 'new', '{"sku": "SKU-004", "qty": 1, "gift": true}'),
  (4, 17.35, 'new', NULL),
  (5, 8.40, 'paid', '{"sku": "SKU-005", "qty": 2}')`,
}

// ensureShop creates the sample database and its tables when missing and
// seeds them when products is empty. It reports whether it seeded.
func ensureShop(ctx context.Context, db *sql.DB) (seeded bool, err error) {
	for _, stmt := range shopDDL {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return false, fmt.Errorf("%s: %w", firstLine(stmt), err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM shop.products").Scan(&n); err != nil {
		return false, fmt.Errorf("count shop.products: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("seed shop: %w", err)
	}
	defer tx.Rollback()
	for _, stmt := range shopSeed {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return false, fmt.Errorf("seed shop: %s: %w", firstLine(stmt), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("seed shop: commit: %w", err)
	}
	return true, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// clientFiles are the mariadb client option files the demo writes.
type clientFiles struct {
	Index, Source string
}

// writeClientFiles writes <dir>/index.cnf and <dir>/source.cnf, mode 0600:
// option files for `mariadb --defaults-extra-file=...`, so that the
// password never appears on a command line.
func writeClientFiles(dir string, env *testsuite.Env) (clientFiles, error) {
	f := clientFiles{Index: filepath.Join(dir, "index.cnf"), Source: filepath.Join(dir, "source.cnf")}
	for _, x := range []struct {
		path string
		s    *testsuite.Server
	}{{f.Index, env.Index}, {f.Source, env.Source}} {
		if err := writeClientFile(x.path, x.s); err != nil {
			return f, err
		}
	}
	return f, nil
}

func writeClientFile(path string, s *testsuite.Server) error {
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	content := "# Written by dbtrail-demo for the " + string(s.Role) + " server; use with\n" +
		"#   mariadb --defaults-extra-file=" + path + "\n" +
		"[client]\n" +
		"host=127.0.0.1\n" +
		"port=" + strconv.Itoa(s.Port) + "\n" +
		"protocol=TCP\n" +
		"user=" + s.User + "\n" +
		`password="` + quote.Replace(s.Password) + "\"\n"
	tmp := path + ".tmp"
	_ = os.Remove(tmp) // so that WriteFile creates it with mode 0600
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		return fmt.Errorf("write client option file %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write client option file %s: %w", path, err)
	}
	return nil
}
