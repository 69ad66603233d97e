package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/catalog"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/testsuite"
)

// publishTiny publishes snapshot id of one table file holding content,
// linking it from prev when prev holds the same content.
func publishTiny(t *testing.T, dir, id, prev, content string) {
	t.Helper()
	b, err := snapshot.NewBuilder(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.WriteFile("db1/t.parquet", func(w io.Writer) error { _, err := io.WriteString(w, content); return err }); err != nil {
		t.Fatal(err)
	}
	m := snapshot.Manifest{Source: "main", Tables: []snapshot.ManifestTable{{Schema: "db1", Table: "t", File: "db1/t.parquet", Kind: snapshot.KindFull}}}
	if prev != "" {
		m.Kind, m.Prev = snapshot.SnapshotRefresh, prev
	}
	if err := b.Publish(m); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotsLocalRemoteBoth: with --archive-url, a snapshot pruned
// locally but uploaded is "remote", an uploaded local one "both", one not
// uploaded "local".
func TestSnapshotsLocalRemoteBoth(t *testing.T) {
	backups, archive := t.TempDir(), t.TempDir()
	dir := filepath.Join(backups, "main")
	ids := []string{"20261129T061500Z", "20261129T062000Z", "20261129T062500Z"}
	publishTiny(t, dir, ids[0], "", "aaaa")
	publishTiny(t, dir, ids[1], ids[0], "aaaa")
	store, err := storage.NewLocal(archive)
	if err != nil {
		t.Fatal(err)
	}
	m, err := remote.New(store, "main", dir, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[:2] {
		if _, err := m.Upload(context.Background(), id, nil); err != nil {
			t.Fatal(err)
		}
	}
	publishTiny(t, dir, ids[2], ids[1], "bbbbbb")
	if err := os.RemoveAll(filepath.Join(dir, snapshot.SnapshotsDir, ids[0])); err != nil {
		t.Fatal(err)
	}
	out, err := runDbtrail(t, "snapshots", "--backup-dir", backups, "--archive-url", archive, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var list []snapshotEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(list) != 3 {
		t.Fatalf("%d snapshots: %s", len(list), out)
	}
	want := []struct {
		where         string
		current, rcur bool
		newBytes      int64
	}{{catalog.WhereRemote, false, false, 4}, {catalog.WhereBoth, false, true, 4}, {catalog.WhereLocal, true, false, 6}}
	for i, w := range want {
		e := list[i]
		if e.ID != ids[i] || e.Where != w.where || e.Current != w.current || e.RemoteCurrent != w.rcur || e.NewBytes != w.newBytes {
			t.Fatalf("entry %d: %+v, want %+v", i, e, w)
		}
	}
	out, err = runDbtrail(t, "snapshots", "--backup-dir", backups, "--archive-url", archive)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{ids[0] + "  full  remote  ", ids[1] + "  refresh  both  ", "[remote current]", ids[2] + "  refresh  local  "} {
		if !strings.Contains(out, s) {
			t.Fatalf("output lacks %q:\n%s", s, out)
		}
	}
}

// TestWorkerRefusesUnusableArchive: a missing bucket or wrong keys stop
// `dbtrail worker` at its start, naming the flag, the bucket and the cause,
// before anything else is opened.
func TestWorkerRefusesUnusableArchive(t *testing.T) {
	srv := testsuite.StartS3(t)
	badKeys := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(badKeys, []byte("[default]\naws_access_key_id = nobody\naws_secret_access_key = wrong\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ url, want string }{
		{srv.BucketURL("no-such-bucket", "backups"), `--archive-url: open s3 bucket "no-such-bucket" at ` + srv.Endpoint + `: the bucket does not exist`},
		{strings.Replace(srv.URL("backups"), "credentials-file="+urlEscape(srv.CredentialsFile()), "credentials-file="+urlEscape(badKeys), 1),
			`--archive-url: open s3 bucket "dbtrail" at ` + srv.Endpoint + `: access denied: check the credentials`},
	} {
		_, err := runDbtrail(t, "worker", "--source-dsn", "dbtrail@tcp(127.0.0.1:1)/", "--index-dsn", "dbtrail@tcp(127.0.0.1:1)/dbtrail",
			"--backup-dir", t.TempDir(), "--archive-url", c.url, "--refresh-every", "0")
		t.Logf("worker start: %v", err)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Fatalf("worker with --archive-url %s: %v\nwant an error starting %q", c.url, err, c.want)
		}
	}
}

// runDbtrail runs the CLI in process and returns its standard output.
func runDbtrail(t *testing.T, args ...string) (string, error) {
	t.Helper()
	for _, v := range []string{"DBTRAIL_ARCHIVE_URL", "DBTRAIL_SOURCE_DSN", "DBTRAIL_INDEX_DSN", "DBTRAIL_BACKUP_DIR"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	cmd := newRootCmd()
	var out strings.Builder
	cmd.SetOut(&out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(append([]string{"--log-level", "error"}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func urlEscape(s string) string { return url.QueryEscape(s) }
