//go:build !unix

package temporal

// lockDir is a no-op where flock is missing; the frontend port still keeps
// a second server from starting on the default address.
func lockDir(string) (func(), error) { return func() {}, nil }
