package activities

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Where a moved table's CREATE TABLE came from (PlanRefreshResult.CreateTableSource).
const (
	createFromSource     = "the source's SHOW CREATE TABLE (it still describes the definition at the cut)"
	createFromDefinition = "rendered from dbtrail's definition at the cut"
)

// movedDefinition reports whether a table's CREATE TABLE at the cut may
// differ from the one its files carry.
func movedDefinition(tp foldplan.TablePlan) bool {
	return tp.DefinitionMoved || foldsLineage(tp)
}

// createTables fills out.CreateTables for every table of the plan whose
// definition a schema change moved. It reads the source's SHOW CREATE
// TABLE (a catalog read, never rows) and takes it when its parse has the
// definition at the cut (same columns, key and indexes): it keeps the
// defaults, comments and options dbtrail's definition does not model. When
// the source cannot say (unreachable, or changed again since the cut) the
// statement is rendered from the definition, and the source of each is
// recorded.
func (a *Activities) createTables(ctx context.Context, source string, p foldplan.Plan, cur map[foldplan.TableKey]*schema.Table, out *calls.PlanRefreshResult) {
	var db *sql.DB
	opened := false
	for _, tp := range p.Tables {
		def := cur[tp.Key]
		if !movedDefinition(tp) || def == nil {
			continue
		}
		if !opened {
			opened = true
			if d, err := a.openSource(source); err == nil {
				db = d
				defer db.Close()
			} else {
				slog.Warn("refresh: the source's CREATE TABLE statements are not read", "source", source, "error", err)
			}
		}
		if out.CreateTables == nil {
			out.CreateTables, out.CreateTableSource = map[string]string{}, map[string]string{}
		}
		name := tp.Key.String()
		if create, err := sourceCreate(ctx, db, tp.Key, def); err == nil {
			out.CreateTables[name], out.CreateTableSource[name] = create, createFromSource
			continue
		} else {
			out.CreateTableSource[name] = createFromDefinition + ": " + err.Error()
		}
		out.CreateTables[name] = snapshot.CreateTableSQL(def)
	}
}

// sourceCreate returns the source's CREATE TABLE of k when it parses to
// def (columns, key and indexes).
func sourceCreate(ctx context.Context, db *sql.DB, k foldplan.TableKey, def *schema.Table) (string, error) {
	if db == nil {
		return "", fmt.Errorf("the source is not configured or not reachable")
	}
	create, err := schema.ShowCreateTable(ctx, db, k.Schema, k.Table)
	if err != nil {
		return "", err
	}
	cat := schema.NewCatalog()
	ch, err := schema.ApplyDDL(cat, k.Schema, create)
	if err != nil || len(ch.Tables) != 1 || ch.Tables[0].New == nil {
		return "", fmt.Errorf("the source's CREATE TABLE of %s does not parse: %v", k, err)
	}
	got, err := ch.Tables[0].New.Stored()
	if err != nil {
		return "", err
	}
	got.Schema, got.Name = def.Schema, def.Name
	if !schema.SameShape(got, def) || !sameIndexes(got.Indexes, def.Indexes) {
		return "", fmt.Errorf("the source's %s changed again since the cut", k)
	}
	return create, nil
}

// sameIndexes compares indexes by name (as MySQL does, case-insensitively),
// columns, and kind.
func sameIndexes(a, b []schema.Index) bool {
	return slices.EqualFunc(a, b, func(x, y schema.Index) bool {
		return strings.EqualFold(x.Name, y.Name) && x.Primary == y.Primary && x.Unique == y.Unique &&
			slices.EqualFunc(x.Columns, y.Columns, strings.EqualFold)
	})
}
