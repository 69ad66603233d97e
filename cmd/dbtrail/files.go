package main

import (
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/dbtrail/dbtrail/internal/filemode"
)

// registerFileMode registers the global --file-mode (DBTRAIL_FILE_MODE):
// who besides dbtrail's user may read what it writes (internal/filemode,
// docs/files.md). Values other than the allowed ones are refused.
func registerFileMode(pf *pflag.FlagSet, p *filemode.Policy) {
	pf.Var(p, "file-mode", "who may read the files dbtrail writes under its backup, work, export and data folders: "+
		filemode.Allowed+"; others never")
}

// folder is a folder dbtrail writes under, named by its role for the log.
type folder struct{ role, path string }

// tightenFolders takes from every file and folder under folders the
// permissions p does not allow (filemode.Tighten), logging one line per
// folder where it changed anything. A command that writes calls it at
// start, before it writes.
func tightenFolders(p filemode.Policy, log *slog.Logger, folders ...folder) error {
	for _, f := range folders {
		if f.path == "" {
			continue
		}
		t, err := filemode.Tighten(f.path, p)
		if err != nil {
			return err
		}
		if t.Any() {
			log.Info("folder tightened: what others could read is now private", slog.String("folder", f.role), slog.String("path", f.path),
				slog.Int("files", t.Files), slog.Int("folders", t.Dirs), slog.String("file_mode", p.String()))
		}
	}
	return nil
}
