package disk

import "path/filepath"

func parentOf(p string) string { return filepath.Dir(p) }
