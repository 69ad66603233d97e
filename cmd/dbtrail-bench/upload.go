package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/testsuite"
)

// benchUpload measures what a refresh sends to object storage: tb's
// previous snapshot goes up to a real S3 server (versitygw on loopback) with
// the UploadSnapshot activity, then a pair of window k is published as the
// next snapshot and uploaded. The measure is the bytes the second upload
// read from local files and sent, against the table file's bytes: files the
// previous snapshot holds are found in the bucket by their content. It publishes into
// tb's source folder (current moves), so it runs after every other run on tb.
func (e *refreshEnv) benchUpload(ctx context.Context, tb *refreshFixture, k int) ([]result, error) {
	acts, stop, err := e.withS3(ctx, "bench")
	if err != nil {
		return nil, err
	}
	defer stop()
	began := time.Now()
	first, err := executeUpload(acts, calls.UploadSnapshotInput{Source: tb.source, SnapshotID: refreshPrevID})
	if err != nil {
		return nil, fmt.Errorf("upload the previous snapshot: %w", err)
	}
	firstTime := time.Since(began)
	id := e.nextID()
	in := e.input(tb, k, foldplan.ActionPair, id)
	if err := executePublishedPair(acts, in); err != nil {
		return nil, err
	}
	began = time.Now()
	up, err := executeUpload(acts, calls.UploadSnapshotInput{Source: tb.source, SnapshotID: id})
	if err != nil {
		return nil, fmt.Errorf("upload the refresh: %w", err)
	}
	elapsed := time.Since(began)
	if len(up.Snapshots) != 1 || up.Snapshots[0].SnapshotID != id {
		return nil, fmt.Errorf("upload of %s uploaded %+v", id, up.Snapshots)
	}
	st := up.Snapshots[0]
	ratio := float64(st.BytesUploaded) / float64(tb.size)
	return []result{
		{"upload: previous snapshot to S3", fmt.Sprintf("%.3f s, %.1f MiB sent", firstTime.Seconds(), mib(first.BytesUploaded)), "",
			"UploadSnapshot of the table file and its 000000 pair; versitygw on loopback"},
		{fmt.Sprintf("upload: refresh of %s changed %s", thousands(k), plural(k, "row")),
			fmt.Sprintf("%.3f s, %.1f KiB sent, %.1f MiB found in the bucket, %.1f MiB copied", elapsed.Seconds(), float64(st.BytesUploaded)/1024, mib(st.BytesSkipped), mib(st.BytesCopied)), "",
			fmt.Sprintf("%d objects sent (the pair and the manifest), %d found by content (one HEAD each), %d copied server-side", st.Uploaded, st.Skipped, st.Copied)},
		judged("upload: ratio bytes sent 1 row / table file", fmt.Sprintf("%.5f", ratio), "", measured(ratio, atMost(0.01, "%.2f"))),
	}, nil
}

// withS3 starts a real S3 server (versitygw on loopback) in a temporary
// folder and returns a copy of the env's activities whose remote store is
// prefix of its bucket; stop stops the server and removes the folder. On
// error nothing is left.
func (e *refreshEnv) withS3(ctx context.Context, prefix string) (acts *activities.Activities, stop func(), err error) {
	dir, err := os.MkdirTemp("", "dbtrail-bench-s3-")
	if err != nil {
		return nil, nil, err
	}
	srv, err := testsuite.StartS3Server(ctx, testsuite.S3Options{Dir: dir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	stop = func() {
		srv.Stop()
		os.RemoveAll(dir)
	}
	store, err := storage.Open(ctx, srv.URL(prefix), storage.Options{})
	if err != nil {
		stop()
		return nil, nil, err
	}
	a := *e.acts
	a.Remote = store
	return &a, stop, nil
}

// executeUpload runs the UploadSnapshot activity in Temporal's test activity
// environment.
func executeUpload(acts *activities.Activities, in calls.UploadSnapshotInput) (calls.UploadSnapshotResult, error) {
	env := newActivityEnv()
	env.RegisterActivity(acts)
	val, err := env.ExecuteActivity(acts.UploadSnapshot, in)
	if err != nil {
		return calls.UploadSnapshotResult{}, err
	}
	var res calls.UploadSnapshotResult
	return res, val.Get(&res)
}

// executePublishedPair stages and runs the pair in, then publishes it with
// PublishRefresh as the snapshot after in.Prev.
func executePublishedPair(acts *activities.Activities, in calls.RefreshTableInput) error {
	if _, err := snapshot.NewBuilder(filepath.Join(acts.BackupDir, in.Source), in.SnapshotID); err != nil {
		return err
	}
	env := newActivityEnv()
	env.RegisterActivity(acts)
	val, err := env.ExecuteActivity(acts.RefreshTable, in)
	if err != nil {
		return err
	}
	var table calls.ConvertTableResult
	if err := val.Get(&table); err != nil {
		return err
	}
	env = newActivityEnv()
	env.RegisterActivity(acts)
	_, err = env.ExecuteActivity(acts.PublishRefresh, calls.PublishRefreshInput{Prev: in.Prev, PublishInput: calls.PublishInput{
		Source: in.Source, SnapshotID: in.SnapshotID, Position: in.Cut, Tables: []calls.ConvertTableResult{table}}})
	return err
}
