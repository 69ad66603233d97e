package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// ErrUnknownTable is the error of a table the schema history never had.
var ErrUnknownTable = errors.New("unknown table")

// TableDefinition is the newest definition of schema.table in the source's
// schema history; a table the history never had is an error naming it.
func TableDefinition(ctx context.Context, store moment.History, source, s, t string) (*schema.Table, error) {
	hist, err := store.SchemaHistory(ctx, source)
	if err != nil {
		return nil, err
	}
	var def *schema.Table
	var tables []string
	for _, v := range hist {
		if v.Schema == s && v.Table == t && v.Definition != nil {
			def = v.Definition
		}
		if v.Schema == s && v.Definition != nil && len(tables) < 20 && !contains(tables, v.Table) {
			tables = append(tables, v.Table)
		}
	}
	if def == nil {
		hint := "schema " + s + " has no table in the index"
		if len(tables) > 0 {
			hint = "tables of " + s + ": " + strings.Join(tables, ", ")
		}
		return nil, fmt.Errorf("%w %s.%s in source %s (%s)", ErrUnknownTable, s, t, source, hint)
	}
	return def, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// OpWords name each op as the history shows it.
var OpWords = map[change.Op]string{change.OpInsert: "insert", change.OpUpdate: "update", change.OpDelete: "delete"}

// RowVersion is event e as one version of a row (the API's answer, and
// `dbtrail history --json`).
func RowVersion(e change.Event) api.RowVersion {
	v := api.RowVersion{Seq: e.Seq, Op: OpWords[e.Op], CommitTime: e.CommitTime.UTC(), GTID: e.GTID, BinlogFile: e.BinlogFile,
		EndPos: e.EndPos, Key: json.RawMessage(e.PK), Before: e.Before, After: e.After}
	if e.PKBefore != "" {
		v.KeyBefore = json.RawMessage(e.PKBefore)
	}
	return v
}
