//go:build !unix

package storage

import (
	"context"
	"errors"
)

// lockFile fails where flock is unavailable: a local pointer cannot be
// swapped safely there.
func lockFile(context.Context, string) (func(), error) {
	return nil, errors.New("swapping a local pointer needs flock, which this system lacks")
}
