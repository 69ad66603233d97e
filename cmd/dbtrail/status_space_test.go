package main

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/workers"
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

func TestWriteWorkerSpace(t *testing.T) {
	var b bytes.Buffer
	writeWorkerSpace(&b, workers.LatestSpaces([]index.FolderSpace{
		{Worker: "11@a", Folder: "backup", Path: "/backups", Free: 100 << 30, Age: 10 * time.Second},
		{Worker: "11@a", Folder: "dump", Path: "/work/main", Free: 10 << 20, Age: 10 * time.Second},
		{Worker: "12@b", Folder: "work", Path: "/gone", Error: "statfs /gone: no such file or directory", Age: 10 * time.Second},
		{Worker: "13@c", Folder: "backup", Path: "/old", Free: 1 << 30, Age: time.Hour},
		// 9@a was killed and restarted as 11@a: its backup record is
		// superseded; its other folder is not.
		{Worker: "9@a", Folder: "backup", Path: "/backups", Free: 1, Age: time.Hour},
		{Worker: "9@a", Folder: "backup", Path: "/elsewhere", Free: 2 << 30, Age: time.Hour},
	}))
	want := "  free space  backup /backups (worker 11@a): 100.0 GiB\n" +
		"  free space  dump /work/main (worker 11@a): 10.0 MiB  LOW (a refresh or backup refuses steps that do not fit, NoRoom)\n" +
		"  free space  work /gone (worker 12@b): statfs /gone: no such file or directory\n" +
		"  free space  backup /old (worker 13@c): 1.0 GiB  (measured 1h0m0s ago: is that worker running?)\n" +
		"  free space  backup /elsewhere (worker 9@a): 2.0 GiB  (measured 1h0m0s ago: is that worker running?)\n"
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
