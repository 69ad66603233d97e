package sqlport

import (
	"context"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dbtrail/dbtrail/api"
)

// slot waits, within ctx (the statement's time limit), for one of the
// query slots the port shares with the API (Config.Slots) and returns its
// release.
func (h *handler) slot(ctx context.Context) (func(), error) {
	if err := h.cfg.Slots.Acquire(ctx); err != nil {
		return nil, err
	}
	return h.cfg.Slots.Release, nil
}

// checkBytes refuses an answer whose rows, as sent, are larger than the
// port's cap (Config.MaxBytes): an error naming the cap, never a cut
// answer.
func (h *handler) checkBytes(rs *mysql.Resultset) error {
	var n int64
	for _, r := range rs.RowDatas {
		n += int64(len(r))
	}
	if n > h.cfg.MaxBytes {
		return errRefused(mysql.ER_TOO_BIG_SELECT, "the answer's rows are larger than the port's cap of %d bytes (--query-max-bytes): ask for fewer rows (LIMIT) or narrower columns", h.cfg.MaxBytes)
	}
	return nil
}

// defaultLimits fills the bounds cfg leaves zero.
func defaultLimits(cfg *Config) error {
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = api.DefaultQueryMaxBytes
	}
	if cfg.Slots == nil {
		cfg.Slots = api.NewQuerySlots(api.DefaultMaxQueries)
	}
	if cfg.MaxBytes < 0 || cfg.MaxRows < 0 || cfg.Timeout < 0 {
		return fmt.Errorf("sql port: bounds must not be negative (max bytes %d, max rows %d, timeout %s)", cfg.MaxBytes, cfg.MaxRows, cfg.Timeout)
	}
	return nil
}
