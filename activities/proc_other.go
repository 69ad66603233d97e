//go:build !unix

package activities

// processAlive assumes every process alive where it cannot be asked.
func processAlive(int) bool { return true }
