package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/workflows"
)

// momentFlags are the flags of a verb that exports through the Export
// workflow: the source, the tables, and the Temporal connection.
type momentFlags struct {
	tf       temporalFlags
	source   string
	schemas  []string
	tables   []string
	parallel int
	label    string
}

func (m *momentFlags) register(f *pflag.FlagSet) {
	m.tf.register(f)
	f.StringVar(&m.source, "source", "main", "source name")
	f.StringArrayVar(&m.schemas, "schema", nil, "only the tables of this schema (repeatable; default every table)")
	f.IntVar(&m.parallel, "parallel", 2, "tables written at once")
	f.StringVar(&m.label, "label", "", "the job's label, unique per source (default <export|restore>-<UTC time>); the job id is <source>:<label>")
}

// selection turns --schema and --table into the export's: a table is
// schema.table, or a bare name when exactly one --schema is given, which
// then only qualifies the names (--schema shop --table orders is
// shop.orders alone).
func (m *momentFlags) selection() (schemas, tables []string, err error) {
	bare := false
	for _, t := range m.tables {
		if strings.Contains(t, ".") {
			tables = append(tables, t)
			continue
		}
		if len(m.schemas) != 1 {
			return nil, nil, fmt.Errorf("--table %q: name it as schema.table (or give exactly one --schema)", t)
		}
		tables, bare = append(tables, m.schemas[0]+"."+t), true
	}
	if bare {
		return nil, tables, nil
	}
	return m.schemas, tables, nil
}

// spec builds the export's spec, with out made absolute (the worker writes
// it: on dev's machine the same path).
func (m *momentFlags) spec(format, out string) (payload.ExportSpec, error) {
	if out == "" || out == "-" {
		return payload.ExportSpec{}, fmt.Errorf("--out is required: the worker writes the export to a path")
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return payload.ExportSpec{}, err
	}
	schemas, tables, err := m.selection()
	if err != nil {
		return payload.ExportSpec{}, err
	}
	return payload.ExportSpec{Source: m.source, Format: format, Schemas: schemas, Tables: tables, Out: abs}, nil
}

// checkMoment parses a moment on the CLI's side, so that a T that does not
// parse is refused before anything starts.
func checkMoment(flag, text string) error {
	if text == "" {
		return fmt.Errorf("--%s is required", flag)
	}
	if _, err := when.Parse(text); err != nil {
		return fmt.Errorf("--%s: %w", flag, err)
	}
	return nil
}

// runExport starts the Export workflow of spec and waits for it with
// progress, then reports what it wrote and the cut it landed on.
func runExport(cmd *cobra.Command, g *globals, m *momentFlags, spec payload.ExportSpec) (workflows.ExportResult, error) {
	ctx := cmd.Context()
	c, svc, err := newJobService(cmd, g, &m.tf)
	if err != nil {
		return workflows.ExportResult{}, err
	}
	defer c.Close()
	run, err := startJob(cmd, c, svc, jobs.Request{Kind: jobs.Export, Source: spec.Source, Label: m.label,
		Input: payload.ExportInput{ExportSpec: spec, Parallel: m.parallel}})
	if err != nil {
		return workflows.ExportResult{}, err
	}
	var res workflows.ExportResult
	if err := newWaiter(cmd.ErrOrStderr(), m.tf.location()).wait(ctx, "Export", run, queryProgress(c, run, exportProgress), &res); err != nil {
		return res, err
	}
	printExport(cmd.OutOrStdout(), spec, res)
	return res, nil
}

// exportProgress shows an Export's progress.
func exportProgress(p payload.ExportProgress) progress {
	return progress{phase: p.Phase, counts: fmt.Sprintf("%d/%d tables, %d rows", p.TablesDone, p.TablesTotal, p.Rows),
		bar: tablesBar(p.TablesDone, p.TablesTotal)}
}

// printExport reports a finished export: where, what, and which transaction
// its cut landed on (or its range's two cuts).
func printExport(w io.Writer, spec payload.ExportSpec, res workflows.ExportResult) {
	if p := res.Plan.Plan; p != nil {
		fmt.Fprintf(w, "exported %s at %s: %d tables, %d rows (%d changes folded into snapshot %s) to %s\n",
			spec.Source, spec.At, len(res.Tables), res.Rows, res.Events, p.Base, res.Out)
		fmt.Fprintf(w, "  cut: %s\n", p.Cut)
	}
	if r := res.Plan.Range; r != nil {
		files := 0
		for _, t := range res.Tables {
			files += len(t.Files)
		}
		fmt.Fprintf(w, "exported the changes of %s in [%s, %s): %d tables, %d files, %d changes to %s\n",
			spec.Source, spec.From, spec.Until, len(res.Tables), files, res.Rows, res.Out)
		fmt.Fprintf(w, "  from (exclusive): %s\n  until (inclusive): %s\n", r.From, r.Until)
	}
	if spec.Format == payload.ExportSQL {
		fmt.Fprintf(w, "  %d INSERT statements (largest %d bytes), %d bytes; load it with:\n    mariadb --defaults-extra-file=client.cnf -h HOST < %s\n",
			res.Finish.Statements, res.Finish.LargestStatement, res.Finish.Bytes, shellQuote(res.Out))
		if res.Finish.Oversize > 0 {
			fmt.Fprintf(w, "warning: %d INSERT statements hold a single row longer than --max-statement-bytes; load with max_allowed_packet of at least %d bytes\n",
				res.Finish.Oversize, res.Finish.LargestStatement)
		}
	}
}

// newExportParquetCmd is `dbtrail export parquet --at T --out DIR`.
func newExportParquetCmd(g *globals) *cobra.Command {
	var m momentFlags
	var at, out string
	cmd := &cobra.Command{
		Use:   "parquet",
		Short: "Write the tables as they were at a moment T: one Parquet table file per table",
		Long: `Rebuild every table (or --schema / --table) as it was at moment T and write
one Parquet file per table into a new folder --out, in the snapshot table
format; each footer names T and the cut's position, and export.json lists
the files with their digests and the transaction the cut landed on.

T is a time (UTC unless it carries a zone or offset: '2026-11-29 08:00:00',
'2026-11-29T09:00:00+01:00', '2026-11-29 09:00 Europe/Paris'), a seq
(seq:81234), a binlog position (binlog.000042:91234), a GTID (0-1-5123) or
latest. The cut is the last transaction committed at or before T, never half
of one. A T inside a capture gap, before the oldest snapshot or after the
capture checkpoint is refused with the reason.

The Export workflow does the work on a worker, which writes --out (a path on
the worker's machine; dbtrail dev's is this one). Nothing appears under --out
until the export is complete.`,
		Example: "  dbtrail export parquet --at '2026-11-29 08:00:00' --out /exports/shop-0800\n" +
			"  dbtrail export parquet --at 0-1-5123 --table shop.orders --out /exports/orders",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkMoment("at", at); err != nil {
				return err
			}
			spec, err := m.spec(payload.ExportParquet, out)
			if err != nil {
				return err
			}
			spec.At = at
			_, err = runExport(cmd, g, &m, spec)
			return err
		},
	}
	f := cmd.Flags()
	m.register(f)
	f.StringArrayVar(&m.tables, "table", nil, "only this table, as schema.table (repeatable)")
	f.StringVar(&at, "at", "", "the moment T (time, seq:N, file:pos, GTID or latest)")
	f.StringVar(&out, "out", "", "folder to create (must not exist)")
	return cmd
}

// runExportSQLAt is `dbtrail export sql --at T`: the Export workflow, format
// sql.
func runExportSQLAt(cmd *cobra.Command, g *globals, m *momentFlags, at, out string, maxBytes int) error {
	if err := checkMoment("at", at); err != nil {
		return err
	}
	spec, err := m.spec(payload.ExportSQL, out)
	if err != nil {
		return err
	}
	spec.At, spec.MaxStatementBytes = at, maxBytes
	_, err = runExport(cmd, g, m, spec)
	return err
}
