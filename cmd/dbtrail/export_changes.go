package main

import (
	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/payload"
)

// newExportChangesCmd is `dbtrail export changes --from T1 --until T2 --out
// DIR`: every change of a range as Parquet, one file per table and shape.
func newExportChangesCmd(g *globals) *cobra.Command {
	var m momentFlags
	var from, until, out string
	cmd := &cobra.Command{
		Use:   "changes",
		Short: "Write every change of [T1, T2) as Parquet: one file per table (and per shape), typed before and after columns",
		Long: `Write every row change committed in [--from, --until) into a new folder --out:
per table <schema>/<table>.000001.parquet, and when a schema change altered the
table's columns inside the range, .000002 and so on, in stream order. Each row
is one change: seq, op (insert, update, delete), commit_time (a UTC
timestamp), gtid, binlog_file, end_pos, pk and pk_before (the canonical key
text), then before_<column> and after_<column> for every column, typed as in
the snapshot table files (numbers as numbers, binary as bytes), so DuckDB or
Spark read them without parsing. Footers name the schema and table, the range,
the export time, the first and last position and the CREATE TABLE;
export.json lists the files.

--from and --until take the forms of dbtrail export parquet --at: a time
(UTC unless it carries a zone or offset), seq:N, binlog file:pos, a GTID, or
latest (the capture checkpoint, included). The range is cut at transaction
boundaries: the changes of the transactions after the last one before --from,
up to the last one before --until. The export streams: memory does not grow
with the number of changes. A range crossing a capture gap, or ending after the
capture checkpoint, is refused with the reason.`,
		Example: "  dbtrail export changes --from '2026-11-29 08:00' --until '2026-11-29 09:00' --out /exports/changes-08\n" +
			"  dbtrail export changes --from 0-1-5000 --until latest --schema shop --table orders --out /exports/orders-changes\n" +
			"  duckdb -c \"SELECT op, count(*) FROM '/exports/changes-08/shop/*.parquet' GROUP BY op\"",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkMoment("from", from); err != nil {
				return err
			}
			if err := checkMoment("until", until); err != nil {
				return err
			}
			spec, err := m.spec(payload.ExportChanges, out)
			if err != nil {
				return err
			}
			spec.From, spec.Until = from, until
			_, err = runExport(cmd, g, &m, spec)
			return err
		},
	}
	f := cmd.Flags()
	m.register(f)
	f.StringArrayVar(&m.tables, "table", nil, "only this table, as schema.table, or a name of the one --schema (repeatable); a table named gets a file even without changes")
	f.StringVar(&from, "from", "", "start of the range T1 (included)")
	f.StringVar(&until, "until", "", "end of the range T2 (excluded; latest includes the checkpoint's transaction)")
	f.StringVar(&out, "out", "", "folder to create (must not exist)")
	return cmd
}
