package embedded

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/server/common/config"
	serverlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	"go.temporal.io/server/common/resolver"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	toolschema "go.temporal.io/server/tools/common/schema"
)

const (
	// schemaName is the embedded schema the upgrades are read from
	// (go.temporal.io/server/schema, folder sqlite/v3/temporal/versioned).
	schemaName = "sqlite/v3/temporal"
	// schemaDBName keys the schema_version row. It is fixed rather than the
	// file path so that a data folder can be moved.
	schemaDBName = "temporal"
)

// ensureSchema creates or upgrades the Temporal schema in the SQLite
// database cfg points at, and is safe to run on every start:
//   - an empty database gets the current schema and a schema_version row;
//   - a database with a schema_version row is upgraded to the version this
//     server build ships (sqlite.Version), running only the missing steps;
//   - a database with Temporal tables but no schema_version row (not made by
//     dbtrail, e.g. by `temporal server start-dev --db-filename`) is refused,
//     since its version cannot be known and a wrong upgrade loses data.
//
// A database newer than this build is refused as well.
func ensureSchema(cfg *config.SQL) error {
	db, err := sql.NewSQLAdminDB(sqlplugin.DbKindUnknown, cfg, resolver.NewNoopResolver(), serverlog.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		return fmt.Errorf("open %s: %w", cfg.DatabaseName, err)
	}
	defer db.Close()
	tables, err := db.ListTables(cfg.DatabaseName)
	if err != nil {
		return fmt.Errorf("list tables of %s: %w", cfg.DatabaseName, err)
	}
	tables = slices.DeleteFunc(tables, func(t string) bool { return strings.HasPrefix(t, "sqlite_") })
	conn := schemaConn{db: db}
	switch {
	case len(tables) == 0:
		if err := sqliteschema.SetupSchemaOnDB(db); err != nil {
			return fmt.Errorf("create Temporal schema in %s: %w", cfg.DatabaseName, err)
		}
		if err := db.CreateSchemaVersionTables(); err != nil {
			return fmt.Errorf("create schema version tables in %s: %w", cfg.DatabaseName, err)
		}
		if err := conn.UpdateSchemaVersion(sqliteschema.Version, sqliteschema.Version); err != nil {
			return fmt.Errorf("record schema version in %s: %w", cfg.DatabaseName, err)
		}
		return conn.WriteSchemaUpdateLog("0.0", sqliteschema.Version, "", "initial schema (dbtrail)")
	case !slices.Contains(tables, "schema_version"):
		return fmt.Errorf("%s holds a Temporal schema of unknown version (no schema_version table: it was not created by dbtrail); use another --data-dir", cfg.DatabaseName)
	}
	cur, err := conn.ReadSchemaVersion()
	if err != nil {
		return fmt.Errorf("read schema version of %s: %w", cfg.DatabaseName, err)
	}
	switch c, err := compareVersions(cur, sqliteschema.Version); {
	case err != nil:
		return fmt.Errorf("schema version of %s: %w", cfg.DatabaseName, err)
	case c == 0:
		return nil
	case c > 0:
		return fmt.Errorf("%s has Temporal schema %s, newer than this build's %s: use a newer dbtrail", cfg.DatabaseName, cur, sqliteschema.Version)
	}
	task := toolschema.NewUpdateSchemaTask(conn, &toolschema.UpdateConfig{
		DBName:        schemaDBName,
		SchemaName:    schemaName,
		TargetVersion: sqliteschema.Version,
	}, serverlog.NewNoopLogger())
	if err := task.Run(); err != nil {
		return fmt.Errorf("upgrade Temporal schema of %s from %s to %s: %w", cfg.DatabaseName, cur, sqliteschema.Version, err)
	}
	return nil
}

// compareVersions compares dotted numeric versions ("0.9" < "0.11").
func compareVersions(a, b string) (int, error) {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			if _, err := fmt.Sscanf(pa[i], "%d", &x); err != nil {
				return 0, fmt.Errorf("bad version %q", a)
			}
		}
		if i < len(pb) {
			if _, err := fmt.Sscanf(pb[i], "%d", &y); err != nil {
				return 0, fmt.Errorf("bad version %q", b)
			}
		}
		if x != y {
			if x < y {
				return -1, nil
			}
			return 1, nil
		}
	}
	return 0, nil
}

// schemaConn adapts the SQL admin DB to the server's schema tool.
type schemaConn struct{ db sqlplugin.AdminDB }

var _ toolschema.DB = schemaConn{}

func (c schemaConn) Exec(stmt string, args ...any) error { return c.db.Exec(stmt, args...) }
func (c schemaConn) DropAllTables() error {
	return errors.New("refused: dbtrail never drops Temporal tables")
}
func (c schemaConn) CreateSchemaVersionTables() error   { return c.db.CreateSchemaVersionTables() }
func (c schemaConn) ReadSchemaVersion() (string, error) { return c.db.ReadSchemaVersion(schemaDBName) }
func (c schemaConn) UpdateSchemaVersion(v, minCompatible string) error {
	return c.db.UpdateSchemaVersion(schemaDBName, v, minCompatible)
}
func (c schemaConn) WriteSchemaUpdateLog(oldV, newV, md5, desc string) error {
	return c.db.WriteSchemaUpdateLog(oldV, newV, md5, desc)
}
func (c schemaConn) Close()       {}
func (c schemaConn) Type() string { return "sql" }

// checkpoint folds the WAL into the database file, so that after a clean
// stop <DataDir>/temporal.db holds everything. Best effort: the WAL is
// durable either way and SQLite replays it on the next open.
func checkpoint(cfg *config.SQL) {
	db, err := sql.NewSQLAdminDB(sqlplugin.DbKindUnknown, cfg, resolver.NewNoopResolver(), serverlog.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		return
	}
	defer db.Close()
	_ = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
}
