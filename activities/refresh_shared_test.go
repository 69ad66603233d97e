package activities

import (
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/foldplan"
)

func TestWrittenFilesLeaveOutTheLinks(t *testing.T) {
	out := ConvertTableResult{File: "app/t.parquet", SHA256: "aa", Size: 10, Chain: []ChainFile{
		{Path: "app/t.000000.posdel", Size: 1}, {Path: "app/t.000000.upserts", Size: 2},
		{Path: "app/t.000001.posdel", Size: 3}, {Path: "app/t.000001.upserts", Size: 4}}}
	pair := []foldplan.Link{{Dst: "app/t.parquet"}, {Dst: "app/t.000000.posdel"}, {Dst: "app/t.000000.upserts"}}
	var got []string
	for _, f := range writtenFiles(pair, out) {
		got = append(got, f.Path)
	}
	if want := []string{"app/t.000001.posdel", "app/t.000001.upserts"}; !slices.Equal(got, want) {
		t.Fatalf("a pair wrote %v, want %v", got, want)
	}
	if files := writtenFiles(nil, out); len(files) != 5 || files[0].digest().SHA256 != "aa" || files[0].digest().Size != 10 {
		t.Fatalf("a rewrite wrote %+v, want the table file and its chain", files)
	}
}
