package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/dbtrail/dbtrail/internal/disk"
)

func TestWriteFreeSpace(t *testing.T) {
	probe := func(p string) (uint64, error) {
		switch p {
		case "/backups":
			return 100 << 30, nil
		case "/work":
			return 10 << 20, nil
		}
		return 0, errors.New("statfs /gone: no such file or directory")
	}
	var b bytes.Buffer
	writeFreeSpace(&b, []string{"/backups", "/work", "/gone"}, disk.Probe(probe))
	want := "  free space  /backups: 100.0 GiB\n" +
		"  free space  /work: 10.0 MiB  LOW (a refresh or backup refuses steps that do not fit, NoRoom)\n" +
		"  free space  /gone: statfs /gone: no such file or directory\n"
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
