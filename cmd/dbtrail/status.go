package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/workers"
)

func newStatusCmd(g *globals) *cobra.Command {
	var source string
	var folders []string
	var tf temporalFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show capture progress and gaps of a source; with --temporal-addr also the last verify verdicts and retention runs",
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := openIndex(cmd, g)
			if err != nil {
				return err
			}
			defer store.Close()
			ctx := cmd.Context()
			cp, ok, err := store.LoadCheckpoint(ctx, source)
			if err != nil {
				return index.Explain(err)
			}
			out := cmd.OutOrStdout()
			if !ok {
				fmt.Fprintf(out, "source %s: no checkpoint yet (capture has not started)\n", source)
				return writeSpace(ctx, out, store, folders, g.fileMode)
			}
			n, err := store.CountEvents(ctx, source)
			if err != nil {
				return err
			}
			lastCommit, gtids := "none yet", "none yet"
			if !cp.LastCommit.IsZero() {
				lastCommit = cp.LastCommit.Format(time.RFC3339Nano)
			}
			if cp.GTIDSet != "" {
				gtids = cp.GTIDSet
			}
			fmt.Fprintf(out, "source %s\n  checkpoint  %s:%d  seq %d\n  gtid set    %s\n  last commit %s\n  updated     %s (%s ago)\n  events      %d\n",
				source, cp.BinlogFile, cp.BinlogPos, cp.LastSeq, gtids,
				lastCommit, cp.UpdatedAt.Format(time.RFC3339), time.Since(cp.UpdatedAt).Round(time.Second), n)
			if err := writeArchiveStatus(ctx, out, store, source); err != nil {
				return err
			}
			drill, ok, err := store.LastDrill(ctx, source)
			if err != nil {
				return err
			}
			writeDrillStatus(out, drill, ok, time.Now())
			redump, ok, err := store.LastRedump(ctx, source)
			if err != nil {
				return err
			}
			writeRedumpStatus(out, redump, ok, time.Now())
			gaps, err := store.Gaps(ctx, source)
			if err != nil {
				return err
			}
			for _, gp := range gaps {
				fmt.Fprintf(out, "  GAP %s:%d → %s:%d  %s (detected %s)\n", gp.FromFile, gp.FromPos, gp.ToFile, gp.ToPos, gp.Reason, gp.DetectedAt.Format(time.RFC3339))
			}
			if err := writeSpace(ctx, out, store, folders, g.fileMode); err != nil {
				return err
			}
			if cmd.Flags().Changed("temporal-addr") {
				c, svc, err := newJobService(cmd, g, &tf)
				if err != nil {
					fmt.Fprintf(out, "  jobs        Temporal at %s unreachable: %v\n", tf.addr, err)
					return nil
				}
				defer c.Close()
				writeJobsStatus(ctx, out, svc, source)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&source, "source", "main", "source name")
	tf.register(cmd.Flags())
	cmd.Flags().StringArrayVar(&folders, "folder", nil, "also show the free space of this folder, measured here (repeatable; the workers' backup, work and dump folders are shown as they last measured them)")
	return cmd
}

// writeSpace writes the free space of the workers' folders as they
// recorded it in store, then that of folders measured here; then a
// warning for each of these folders on this machine that others can
// read (writeOpenFolders).
func writeSpace(ctx context.Context, out io.Writer, store *index.Store, folders []string, policy filemode.Policy) error {
	space, err := store.FolderSpaces(ctx)
	switch {
	case errors.Is(err, index.ErrNoFolderSpace):
		fmt.Fprintf(out, "  free space  not recorded: %v\n", index.ErrNoFolderSpace)
	case err != nil:
		return err
	default:
		writeWorkerSpace(out, workers.LatestSpaces(space))
	}
	writeFreeSpace(out, folders, disk.Free)
	writeOpenFolders(out, append(localFolders(space), folders...), policy)
	return nil
}

// writeFreeSpace writes one line per folder: its free space, marked LOW
// when disk.Low, or why it could not be measured.
func writeFreeSpace(out io.Writer, folders []string, probe disk.Probe) {
	for _, f := range folders {
		free, err := probe(f)
		var failure string
		if err != nil {
			failure = err.Error()
		}
		fmt.Fprintf(out, "  free space  %s: %s\n", f, freeText(free, failure))
	}
}

// spaceStale is the age past which a worker's recorded folder measure is
// marked stale: three of its measuring periods.
const spaceStale = 3 * workers.SpaceEvery

// writeWorkerSpace writes one line per folder the workers recorded in the
// index (workers.SpaceWatch): the folder's role, path and worker, its free
// space as freeText says, and the measure's age when it is stale (the
// worker was killed, or cannot reach the index).
func writeWorkerSpace(out io.Writer, fs []index.FolderSpace) {
	for _, f := range fs {
		line := fmt.Sprintf("  free space  %s %s (worker %s): %s", f.Folder, f.Path, f.Worker, freeText(f.Free, f.Error))
		if f.Age > spaceStale {
			line += fmt.Sprintf("  (measured %s ago: is that worker running?)", f.Age.Round(time.Second))
		}
		fmt.Fprintln(out, line)
	}
}

// freeText is a folder's free space, marked LOW when disk.Low, or why it
// could not be measured (failure, when not "").
func freeText(free uint64, failure string) string {
	switch {
	case failure != "":
		return failure
	case disk.Low(free):
		return disk.Bytes(free) + "  LOW (a refresh or backup refuses steps that do not fit, NoRoom)"
	default:
		return disk.Bytes(free)
	}
}

// writeArchiveStatus prints the index's size and what of source is
// archived.
func writeArchiveStatus(ctx context.Context, out io.Writer, store *index.Store, source string) error {
	size, err := store.Size(ctx)
	if err != nil {
		return err
	}
	recs, err := store.Archives(ctx, source)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  index size  %s (event_chunks, every source)\n", sizeText(size))
	if len(recs) == 0 {
		fmt.Fprintln(out, "  archived    nothing: the index keeps every hour (the archive needs an archive location, --archive-url)")
		return nil
	}
	var events, bytes int64
	unconfirmed := 0
	for _, r := range recs {
		events += r.Events
		bytes += r.Size
		if !r.Confirmed() {
			unconfirmed++
		}
	}
	last := recs[len(recs)-1]
	fmt.Fprintf(out, "  archived    %d hours, %d events, %s, up to hour %s at %s; %d not confirmed (dbtrail archives)\n",
		len(recs), events, sizeText(bytes), change.HourTime(last.Hour).Format("2006-01-02 15:00"), last.Location, unconfirmed)
	return nil
}

// writeDrillStatus prints source's last restore drill: its verdict, when,
// the moment and its cut, what it restored and how long it took.
func writeDrillStatus(out io.Writer, d index.Drill, ok bool, now time.Time) {
	if !ok {
		fmt.Fprintln(out, "  last drill  none (a restore drill: dbtrail restore --drill, or --drill-every on dev/worker)")
		return
	}
	fmt.Fprintf(out, "  last drill  %s at %s (%s ago) into %s: moment %s, %d tables, %d rows, took %s\n",
		strings.ToUpper(d.Verdict), d.StartedAt.UTC().Format(time.RFC3339), now.Sub(d.StartedAt).Round(time.Second), d.Target,
		d.Moment, d.Tables, d.Rows, d.Took().Round(time.Millisecond))
	if d.Cut != "" {
		fmt.Fprintf(out, "              cut %s, snapshot %s\n", d.Cut, d.Snapshot)
	}
	if d.Failure != "" {
		fmt.Fprintf(out, "              failure: %s\n", d.Failure)
	}
}

// writeRedumpStatus prints source's last partial full backup (a re-dump
// of some tables): when, the tables, the rows read from the source, how
// long it took, and its partial snapshot and seq.
func writeRedumpStatus(out io.Writer, r index.Redump, ok bool, now time.Time) {
	if !ok {
		fmt.Fprintln(out, "  last redump none (a partial full backup of some tables: dbtrail backup full --tables)")
		return
	}
	fmt.Fprintf(out, "  last redump %s (%s ago): %d tables (%s), %d rows read from the source, took %s; partial snapshot %s at seq %d\n",
		r.StartedAt.UTC().Format(time.RFC3339), now.Sub(r.StartedAt).Round(time.Second), len(r.Tables), strings.Join(r.Tables, ", "),
		r.Rows, r.Took().Round(time.Millisecond), r.Snapshot, r.Seq)
}
