// Package payload is what a client of dbtrail's workflows sends and reads:
// each workflow's ID, input and progress, the task queue and the query
// name, the one table of a source's schedules, the export and restore
// specs, and the types of the non-retryable errors activities return
// (a restore's own are internal/restore's kinds, activities.ErrTarget…).
//
// It is light on purpose: the HTTP API, the console's jobs and the CLI's
// client verbs import it instead of the workflows and their activities,
// and so link neither DuckDB nor Arrow (workers.TestClientPackagesLinkNoEngine).
// Its types are the JSON of workflow histories: a field is renamed or
// removed only with a decoder for the histories recorded before.
package payload
