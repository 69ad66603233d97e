package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/index"
)

// TestWriteOpenFolders: a folder others (or, when private, the group) can
// enter gets a WARNING line naming it and its mode; a private one and a
// missing one get none.
func TestWriteOpenFolders(t *testing.T) {
	base := t.TempDir()
	modes := map[string]os.FileMode{"open": 0o755, "group": 0o750, "private": 0o700}
	var folders []string
	for _, name := range []string{"open", "group", "private"} {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, modes[name]); err != nil {
			t.Fatal(err)
		}
		folders = append(folders, p)
	}
	folders = append(folders, filepath.Join(base, "missing"))
	for policy, open := range map[filemode.Policy][]string{filemode.Private: {"open", "group"}, filemode.Group: {"open"}} {
		var b bytes.Buffer
		writeOpenFolders(&b, folders, policy)
		var want strings.Builder
		for _, name := range open {
			fmt.Fprintf(&want, "  WARNING     folder %s is %o: readable by others (file mode %s allows %o); a worker or dev tightens it at start (docs/files.md)\n",
				filepath.Join(base, name), modes[name], policy, policy.Dir())
		}
		if b.String() != want.String() {
			t.Errorf("%v:\n%s\nwant\n%s", policy, b.String(), want.String())
		}
	}
}

// TestLocalFolders: only the folders of workers on this host, once each.
func TestLocalFolders(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	got := localFolders([]index.FolderSpace{
		{Worker: "1@" + host, Folder: "backup", Path: "/b"},
		{Worker: "2@elsewhere", Folder: "backup", Path: "/x"},
		{Worker: "3@" + host, Folder: "backup", Path: "/b"},
		{Worker: "3@" + host, Folder: "work", Path: "/w"},
	})
	if strings.Join(got, ",") != "/b,/w" {
		t.Errorf("localFolders = %v, want /b and /w", got)
	}
}

// TestFileModeRefused: --file-mode and DBTRAIL_FILE_MODE accept only the
// allowed values, before the command runs.
func TestFileModeRefused(t *testing.T) {
	run := func(args ...string) error {
		root := newRootCmd()
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		root.SetArgs(args)
		return root.Execute()
	}
	if err := run("status", "--file-mode", "0644"); err == nil || !strings.Contains(err.Error(), filemode.Allowed) {
		t.Errorf("--file-mode 0644: %v", err)
	}
	t.Setenv("DBTRAIL_FILE_MODE", "0755")
	if err := run("status"); err == nil || !strings.Contains(err.Error(), "DBTRAIL_FILE_MODE") || !strings.Contains(err.Error(), filemode.Allowed) {
		t.Errorf("DBTRAIL_FILE_MODE=0755: %v", err)
	}
}
