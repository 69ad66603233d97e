package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/index"
)

// localFolders are the paths of the folders the workers of this machine
// recorded (a worker's identity is <pid>@<host>): status can look at
// those; another machine's folders it cannot.
func localFolders(fs []index.FolderSpace) []string {
	host, err := os.Hostname()
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range fs {
		if _, h, _ := strings.Cut(f.Worker, "@"); h == host && !seen[f.Path] {
			seen[f.Path] = true
			out = append(out, f.Path)
		}
	}
	return out
}

// writeOpenFolders writes a WARNING line for each folder whose own mode
// lets in more than policy allows (filemode.OpenToOthers): the group or
// others can read the copy of production under it. A folder that does not
// exist or cannot be looked at is skipped (the free space lines say why).
func writeOpenFolders(out io.Writer, folders []string, policy filemode.Policy) {
	for _, f := range folders {
		open, err := filemode.OpenToOthers(f, policy)
		if err != nil || !open {
			continue
		}
		info, err := os.Stat(f)
		if err != nil {
			continue
		}
		fmt.Fprintf(out, "  WARNING     folder %s is %o: readable by others (file mode %s allows %o); a worker or dev tightens it at start (docs/files.md)\n",
			f, info.Mode().Perm(), policy, policy.Dir())
	}
}
