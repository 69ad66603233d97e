package target

import (
	"context"
	"database/sql"
	"fmt"
)

// Identity is who a MySQL/MariaDB server is, whatever address reached it:
// its server_id, host name and port, and the server_uuid (MySQL) or GTID
// domain (MariaDB) where it has one.
type Identity struct {
	ServerID   uint64
	Hostname   string
	Port       int
	UUID       string
	GTIDDomain string
}

// String is the identity as an error names it.
func (id Identity) String() string {
	s := fmt.Sprintf("server_id %d, hostname %s, port %d", id.ServerID, id.Hostname, id.Port)
	if id.UUID != "" {
		s += ", server_uuid " + id.UUID
	}
	if id.GTIDDomain != "" {
		s += ", gtid_domain_id " + id.GTIDDomain
	}
	return s
}

// Same reports whether a and b are one server: the same server_uuid where
// both have one, else the same server_id, host name, port and GTID domain.
func (id Identity) Same(o Identity) bool {
	if id.UUID != "" && o.UUID != "" {
		return id.UUID == o.UUID
	}
	return id.ServerID == o.ServerID && id.Hostname == o.Hostname && id.Port == o.Port && id.GTIDDomain == o.GTIDDomain
}

// Identify reads the identity of the server db is connected to.
func Identify(ctx context.Context, db *sql.DB) (Identity, error) {
	var id Identity
	if err := db.QueryRowContext(ctx, "SELECT @@server_id, @@hostname, @@port").Scan(&id.ServerID, &id.Hostname, &id.Port); err != nil {
		return id, fmt.Errorf("server identity: %w", err)
	}
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('server_uuid', 'gtid_domain_id')")
	if err != nil {
		return id, fmt.Errorf("server identity: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return id, fmt.Errorf("server identity: %w", err)
		}
		if k == "server_uuid" {
			id.UUID = v
		} else {
			id.GTIDDomain = v
		}
	}
	if err := rows.Err(); err != nil {
		return id, fmt.Errorf("server identity: %w", err)
	}
	return id, nil
}
