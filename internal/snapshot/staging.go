package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/filemode"
)

// A staging folder <source dir>/.staging/<id> belongs to the workflow run
// that allocated it. Its owner is recorded beside it, in
// .staging/<id>.owner, so that a folder a failed or killed run left
// behind can be told from one a running run is writing: only the
// orchestrator knows which runs still run, never the folder's age.

// ownerSuffix ends the name of a staging folder's owner file.
const ownerSuffix = ".owner"

// Owner is the workflow run that allocated a staging folder.
type Owner struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
}

// Staging is one staging folder of a source, with its owner (nil when
// none is recorded: a folder from before owners were recorded).
type Staging struct {
	ID    string
	Owner *Owner
}

// WriteStagingOwner records o as the owner of snapshot id's staging folder
// (crash-safely).
func WriteStagingOwner(sourceDir, id string, o Owner) error {
	path := Folder(sourceDir).Staging(id + ownerSuffix)
	return atomicfile.Write(path, filemode.File(), func(w io.Writer) error { return json.NewEncoder(w).Encode(o) })
}

// Stagings lists the source's staging folders with their owners; an owner
// file whose folder is gone (the snapshot was published) is listed with
// its id too, so that it is removed with RemoveStaging.
func Stagings(sourceDir string) ([]Staging, error) {
	dir := Folder(sourceDir).Staging()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list staging folders: %w", err)
	}
	seen := map[string]*Staging{}
	var out []*Staging
	get := func(id string) *Staging {
		if s, ok := seen[id]; ok {
			return s
		}
		s := &Staging{ID: id}
		seen[id] = s
		out = append(out, s)
		return s
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.IsDir():
			get(name)
		case strings.HasSuffix(name, ownerSuffix):
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return nil, fmt.Errorf("read owner of staging folder %s: %w", name, err)
			}
			var o Owner
			if err := json.Unmarshal(b, &o); err != nil {
				return nil, fmt.Errorf("owner file %s: %w", filepath.Join(dir, name), err)
			}
			get(strings.TrimSuffix(name, ownerSuffix)).Owner = &o
		}
	}
	res := make([]Staging, len(out))
	for i, s := range out {
		res[i] = *s
	}
	return res, nil
}

// RemoveStaging removes snapshot id's staging folder and its owner file;
// what is already gone is no error. It never touches a published snapshot.
func RemoveStaging(sourceDir, id string) error {
	if err := checkStagingID(id); err != nil {
		return err
	}
	dir := Folder(sourceDir).Staging()
	if err := os.RemoveAll(filepath.Join(dir, id)); err != nil {
		return fmt.Errorf("remove staging folder %s: %w", id, err)
	}
	if err := os.Remove(filepath.Join(dir, id+ownerSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove owner of staging folder %s: %w", id, err)
	}
	return nil
}

// checkStagingID refuses an id that is not one folder name.
func checkStagingID(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) {
		return fmt.Errorf("staging folder id %q: want one folder name", id)
	}
	return nil
}
