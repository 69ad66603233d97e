package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbtrail/dbtrail/payload"
)

// viewsAt is `dbtrail views --at T --export-dir DIR`: a parquet export of
// moment T with views.sql, DuckDB views over its table files.
type viewsAt struct {
	m   momentFlags
	at  string
	dir string
}

func (v *viewsAt) register(f *pflag.FlagSet) {
	f.StringVar(&v.at, "at", "", "write views over the tables as they were at moment T (time, seq:N, file:pos, GTID or latest): exports them first (the Export workflow) into --export-dir")
	f.StringVar(&v.dir, "export-dir", "", "with --at: the folder to create for the export and its views.sql")
	f.StringArrayVar(&v.m.schemas, "schema", nil, "with --at: only the tables of this schema (repeatable)")
	f.StringArrayVar(&v.m.tables, "table", nil, "with --at: only this table, as schema.table (repeatable)")
	f.IntVar(&v.m.parallel, "parallel", 2, "with --at: tables rebuilt at once")
	v.m.tf.register(f)
}

// run exports moment T with its views and says how to query them.
func (v *viewsAt) run(cmd *cobra.Command, g *globals, source string) error {
	if err := checkMoment("at", v.at); err != nil {
		return err
	}
	if v.dir == "" {
		return fmt.Errorf("--at needs --export-dir: the folder the moment is exported to, with its views.sql")
	}
	v.m.source = source
	spec, err := v.m.spec(payload.ExportParquet, v.dir)
	if err != nil {
		return err
	}
	spec.At, spec.Views = v.at, true
	res, err := runExport(cmd, g, &v.m, spec)
	if err != nil {
		return err
	}
	views := filepath.Join(res.Out, "views.sql")
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: views of %d tables at %s\nquery them:\n  duckdb -init %s\n", views, len(res.Tables), v.at, shellQuote(views))
	return nil
}
