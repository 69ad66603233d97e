// Command dbtrail keeps an always-current, open-format copy of a MySQL or
// MariaDB server: capture reads its binlog into the index, workflows turn the
// index into Parquet snapshots and archives.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "dbtrail:", err)
		os.Exit(1)
	}
}
