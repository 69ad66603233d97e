package restore

import (
	"fmt"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/throttle"
	"github.com/dbtrail/dbtrail/internal/when"
)

// DefaultLoadSlice is how long one slice of a table's load loads (Load.Slice).
const DefaultLoadSlice = 5 * time.Second

// DefaultPartRows is the fewest rows a part of a restored table loads
// (Load.PartRows): a smaller table loads on one connection.
const DefaultPartRows = 100_000

// Options are how a restore loads: where its tables go and its
// bookkeeping lives, and what it may do there.
type Options struct {
	Source string
	At     string
	// IntoSchema is the schema the tables go into ({schema} stands for the
	// source table's schema); empty: the source table's own schema.
	IntoSchema string
	// Replace loads into a twin table and swaps it in after it is verified.
	Replace bool
	// Drill restores into new schemas that are dropped at the end.
	Drill bool
	// NoBinlog loads with sql_log_bin=0.
	NoBinlog bool
	// CheckpointSchema holds the bookkeeping tables ("": the default).
	CheckpointSchema string
	Limits           throttle.Limits
}

// Bookkeeping is the schema of the bookkeeping tables.
func (o Options) Bookkeeping() string { return CheckpointSchemaOr(o.CheckpointSchema) }

// CheckpointSchemaOr is s, or DefaultCheckpointSchema when s is empty.
func CheckpointSchemaOr(s string) string {
	if s == "" {
		return DefaultCheckpointSchema
	}
	return s
}

// Mode is ModeNew or ModeReplace.
func (o Options) Mode() string {
	if o.Replace {
		return ModeReplace
	}
	return ModeNew
}

// Check refuses options that cannot be, in this order: a drill with
// --replace or --into-schema (a drill's IntoSchema becomes DrillSchema),
// an --at that does not parse (it returns the parsed moment), limits
// outside their bounds and a checkpoint schema MySQL cannot name. Each
// is KindBadInput.
func (o *Options) Check() (when.At, error) {
	if o.Drill {
		if o.Replace || o.IntoSchema != "" && o.IntoSchema != DrillSchema {
			return when.At{}, fail(KindBadInput, fmt.Errorf("a restore drill loads into new schemas %s: not with --replace or --into-schema", DrillSchema))
		}
		o.IntoSchema = DrillSchema
	}
	at, err := when.Parse(o.At)
	if err != nil {
		return when.At{}, fail(KindBadInput, fmt.Errorf("--at: %w", err))
	}
	return at, o.checkBounds()
}

// checkBounds refuses limits outside their bounds and a checkpoint
// schema MySQL cannot name.
func (o Options) checkBounds() error {
	if err := o.Limits.Check(); err != nil {
		return fail(KindBadInput, err)
	}
	if o.CheckpointSchema != "" {
		if err := CheckIdent("--checkpoint-schema", o.CheckpointSchema); err != nil {
			return fail(KindBadInput, err)
		}
	}
	return nil
}

// Job is one table of a restore: its rebuild at the cut and where it goes
// in the target.
type Job struct {
	RestoreID string
	Table     moment.TablePlan
	Cut       moment.Cut
	// Schema and Name are the target table; Load is the table rows are
	// loaded into (Name, or its --replace twin).
	Schema, Name, Load string
}

// Target is schema.name of the target table.
func (j Job) Target() string { return j.Schema + "." + j.Name }

// Jobs maps every table of plan to its target table, refusing a name
// MySQL cannot hold and two tables onto one name.
func Jobs(id string, plan moment.Plan, o Options) ([]Job, error) {
	seen := map[string]string{}
	var jobs []Job
	for _, tp := range plan.Tables {
		j := Job{RestoreID: id, Table: tp, Cut: plan.Cut, Schema: TargetSchema(o.IntoSchema, tp.Schema), Name: tp.Table, Load: tp.Table}
		if o.Replace {
			j.Load = LoadTable(tp.Table)
		}
		if err := CheckIdent("target schema", j.Schema); err != nil {
			return nil, fail(KindBadInput, fmt.Errorf("table %s: %w", tp.Key(), err))
		}
		if j.Schema == o.Bookkeeping() && j.Name == BookkeepingTable {
			return nil, fail(KindBadInput, fmt.Errorf("table %s would be restored onto the bookkeeping table %s.%s", tp.Key(), j.Schema, j.Name))
		}
		key := strings.ToLower(j.Target())
		if other, ok := seen[key]; ok {
			return nil, fail(KindBadInput, fmt.Errorf("tables %s and %s would both be restored into %s: give --into-schema a {schema} placeholder", other, tp.Key(), j.Target()))
		}
		seen[key] = tp.Key().String()
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return nil, fail(KindBadInput, fmt.Errorf("no table to restore at %s", o.At))
	}
	return jobs, nil
}

// Schemas are the target schemas of jobs, each once.
func Schemas(jobs []Job) []string {
	var out []string
	seen := map[string]bool{}
	for _, j := range jobs {
		if !seen[j.Schema] {
			seen[j.Schema] = true
			out = append(out, j.Schema)
		}
	}
	return out
}
