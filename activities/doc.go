// Package activities holds dbtrail's Temporal activities: the I/O half of
// every workflow. Activities are methods on Activities, a struct of
// dependencies; each takes one input struct and returns one result struct, package calls'.
// They are idempotent: outputs go to deterministic paths, and a re-run
// overwrites staging or skips work whose digest already matches. Payloads
// carry paths, keys and counts, never rows.
package activities
