package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// manifestCatalog is a Catalog with one snapshot's manifest.
type manifestCatalog struct{}

func (manifestCatalog) Snapshots(context.Context, string) ([]SnapshotEntry, error) { return nil, nil }
func (manifestCatalog) Archives(context.Context, string) ([]ArchivedHour, error)   { return nil, nil }
func (manifestCatalog) Capture(context.Context, string) (*CaptureStatus, error)    { return nil, nil }
func (manifestCatalog) Folders(context.Context) ([]FolderSpace, error)             { return nil, nil }

func (manifestCatalog) Manifest(_ context.Context, source, id string) ([]byte, error) {
	if source != "main" || id != "20261201T100000Z" {
		return nil, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Field: "id", Message: "no snapshot " + id}
	}
	return []byte(`{"snapshot_id":"20261201T100000Z"}`), nil
}

// TestManifestRoute: GET /v1/snapshots/{id}/manifest answers the
// catalog's manifest as it is, a bad id 400, an unknown one the catalog's
// 404, a catalog without manifests 501.
func TestManifestRoute(t *testing.T) {
	f := newFixture(t, true, func(c *Config) { c.Catalog = manifestCatalog{} })
	req := func(path string) (int, string) {
		t.Helper()
		st, body, _ := f.do("GET", path, roSecret, "")
		s, _ := body["snapshot_id"].(string)
		if e, ok := body["error"].(map[string]any); ok {
			s, _ = e["code"].(string)
		}
		return st, s
	}
	if st, id := req("/v1/snapshots/20261201T100000Z/manifest"); st != 200 || id != "20261201T100000Z" {
		t.Fatalf("the manifest: %d %s", st, id)
	}
	if st, code := req("/v1/snapshots/20261201T100001Z/manifest"); st != 404 || code != CodeNotFound {
		t.Fatalf("an unknown snapshot: %d %s", st, code)
	}
	if st, code := req("/v1/snapshots/" + strings.Repeat("x", 300) + "/manifest"); st != 400 || code != CodeBadRequest {
		t.Fatalf("a bad id: %d %s", st, code)
	}
	off := newFixture(t, false)
	if st, _, _ := off.do("GET", "/v1/snapshots/20261201T100000Z/manifest", "", ""); st != 501 {
		t.Fatalf("without a catalog: %d", st)
	}
}

func (manifestCatalog) CheckFiles(_ context.Context, source, id, table string) (FileChecks, error) {
	return FileChecks{Snapshot: id, Table: table, Files: []FileCheck{{Path: "app/t.parquet", Status: "differs", Detail: "size 1, manifest says 2"}}}, nil
}

// TestCheckFilesRoute: GET /v1/snapshots/{id}/check?table= answers the
// catalog's checks of the table's files (read-only tokens too); without a
// table it is a 400 naming the field.
func TestCheckFilesRoute(t *testing.T) {
	f := newFixture(t, true, func(c *Config) { c.Catalog = manifestCatalog{} })
	st, body, _ := f.do("GET", "/v1/snapshots/20261201T100000Z/check?table=app.t", roSecret, "")
	files, _ := body["files"].([]any)
	if st != 200 || body["table"] != "app.t" || len(files) != 1 || files[0].(map[string]any)["status"] != "differs" {
		t.Fatalf("the check: %d %v", st, body)
	}
	st, body, _ = f.do("GET", "/v1/snapshots/20261201T100000Z/check", roSecret, "")
	if e, _ := body["error"].(map[string]any); st != 400 || e["field"] != "table" {
		t.Fatalf("no table: %d %v", st, body)
	}
}
