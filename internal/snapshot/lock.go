package snapshot

import (
	"context"
	"fmt"
	"os"

	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/flock"
)

// LockPublish takes the publish lock of the source folder dir, waiting for
// another publisher of the same source (another worker on this host) until
// ctx is done; the returned func releases it. Whoever moves `current`,
// rewrites the views or installs a downloaded snapshot holds it. The lock
// dies with its process.
func LockPublish(ctx context.Context, dir string) (func(), error) {
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return nil, fmt.Errorf("publish lock of %s: %w", dir, err)
	}
	unlock, err := flock.Lock(ctx, Folder(dir).PublishLock())
	if err != nil {
		return nil, fmt.Errorf("publish lock of %s: %w", dir, err)
	}
	return unlock, nil
}
